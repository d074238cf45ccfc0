// The pipeline threads' young generation (pool-runner.ts): set unless Node was given a semi-space size, which a
// worker's resourceLimits would otherwise override (`make tune` tries --max-semi-space-size on the whole process).
import t from 'tap';
import { YOUNG_GENERATION_MB, youngGeneration } from '../../src/pipeline/pool-runner.js';

t.test('set by default, left to Node when a semi-space size is given in the options or NODE_OPTIONS', async (t) => {
  const saved = process.env.NODE_OPTIONS;
  t.teardown(() => {
    if (saved === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = saved;
  });
  delete process.env.NODE_OPTIONS;
  t.same(youngGeneration([]), { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB });
  t.same(youngGeneration(['--enable-source-maps']), { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB });
  t.equal(youngGeneration(['--max-semi-space-size=64']), undefined);
  t.equal(youngGeneration(['--max_semi_space_size', '8']), undefined);
  process.env.NODE_OPTIONS = '--max-semi-space-size=4 --enable-source-maps';
  t.equal(youngGeneration([]), undefined);
});
