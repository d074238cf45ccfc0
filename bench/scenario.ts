// What a benchmark scenario and a broker variant are: data the runner iterates over. A later issue adds a
// scenario by adding an entry to a table in bench/scenarios/, and a variant by adding one to bench/variants.ts.
import type { DatabaseProcess } from './database-cpu.js';
import type { LoadRequest } from './load.js';

export interface Scenario {
  name: string;
  description: string;
  /** Least acceptable ratio of the broker's req/s to the bare server's on the same requests (issue targets). */
  targetRatio?: number;
  /** Entities each request writes (batch upsert): the report gives entities/s too. */
  entitiesPerRequest?: number;
  /** Least acceptable entities/s (issue 24: batch upsert >= 150,000). */
  targetEntitiesPerS?: number;
  /** Entities `setup` seeds on a fresh broker, for the runner's time estimate. */
  seeds?: number;
  /** Seeds what the requests need through the broker's NGSI-LD API (once per broker); never run against the bare server. */
  setup?: (baseUrl: string) => Promise<void>;
  /**
   * The request definitions of one measured run. The same definitions go to the bare server and to every broker, so
   * per-request setup (`next`) costs the load generator the same on each; a counter that must not repeat across
   * runs (create's new ids) lives outside this function.
   */
  requests: () => LoadRequest[];
}

export interface BrokerVariant {
  name: string;
  description: string;
  /** Arguments added to `node dist/src/main.js --port 0 --host 127.0.0.1 --logLevel info`. */
  args: string[];
  /** Another build's main.js (`--baseline`); absent: this checkout's. */
  script?: string;
  /** The scenarios this variant runs (by name); absent: every one. */
  only?: readonly string[];
  /** Loads what the variant's broker holds before any scenario (--scale: unrelated data); `log` prints progress. */
  preload?: (baseUrl: string, log: (line: string) => void) => Promise<void>;
  /** Entities `preload` writes, for the runner's time estimate. */
  preloads?: number;
  /** Environment of the broker process (BENCH_PARALLELISM with bench/parallelism.js: more threads than cores). */
  env?: Record<string, string>;
  /** Node flags of the broker process. */
  nodeFlags?: string[];
  /** The database servers behind the broker (docdb: FerretDB, PostgreSQL), whose CPU per request the rows add. */
  databases?: readonly DatabaseProcess[];
  /** Run once the variant's broker stopped (docdb: drops its database). */
  cleanup?: () => Promise<void>;
}
