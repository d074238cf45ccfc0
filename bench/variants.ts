// The broker configurations `make bench` compares; the first is the default, the only one `--smoke` runs.
import type { BrokerVariant } from './scenario.js';

export const variants: BrokerVariant[] = [
  { name: 'uws-pool', description: 'uWS front, pipeline in the worker pool (the defaults)', args: [] },
  { name: 'uws-inline', description: 'uWS front, pipeline on the front thread', args: ['--connectionPoolSize', '0'] },
  { name: 'node-pool', description: 'node:http front, pipeline in the worker pool', args: ['--httpServer', 'node'] },
];
