// Loaded into a broker under test with `--import` when a bench variant asks for more pipeline threads than cores
// (issue 24 item 4: the hand-off is not serialised): the pool caps --connectionPoolSize at
// os.availableParallelism(), so this makes it answer BENCH_PARALLELISM instead. Never part of the product.
import os from 'node:os';
import { syncBuiltinESMExports } from 'node:module';

const n = Number(process.env.BENCH_PARALLELISM);
if (Number.isInteger(n) && n > 0) {
  os.availableParallelism = (): number => n;
  // Named ESM imports of node:os (`import { availableParallelism }`) see the change only once synced.
  syncBuiltinESMExports();
}
