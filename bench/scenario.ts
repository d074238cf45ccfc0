// What a benchmark scenario and a broker variant are: data the runner iterates over. A later issue adds a
// scenario by adding an entry to a table in bench/scenarios/, and a variant by adding one to bench/variants.ts.
import type { LoadRequest } from './load.js';

export interface Scenario {
  name: string;
  description: string;
  /** Least acceptable ratio of the broker's req/s to the bare server's on the same requests (issue targets). */
  targetRatio?: number;
  /** Seeds what the requests need through the broker's NGSI-LD API; never run against the bare server. */
  setup?: (baseUrl: string) => Promise<void>;
  /** The request definitions of one measured run, built fresh so counters start anew. */
  requests: () => LoadRequest[];
}

export interface BrokerVariant {
  name: string;
  description: string;
  /** Arguments added to `node dist/src/main.js --port 0 --host 127.0.0.1 --logLevel info`. */
  args: string[];
  /** The scenarios this variant runs (by name); absent: every one. */
  only?: readonly string[];
  /** Run once the variant's broker stopped (docdb: drops its database). */
  cleanup?: () => Promise<void>;
}
