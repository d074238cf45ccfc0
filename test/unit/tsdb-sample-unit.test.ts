// tsdb-history.ts sampleUnit: an aggregation period in the largest SAMPLE BY unit that divides it, or null when
// QuestDB 9.3 would refuse its count ('invalid sample value' past 2^31 - 1), so that the read takes the GROUP BY.
import t from 'tap';
import { sampleUnit } from '../../src/plugins/history/tsdb/tsdb-history.js';

t.test('the largest unit that divides the period', async (t) => {
  t.equal(sampleUnit(3_600_000), '1h');
  t.equal(sampleUnit(86_400_000 * 7), '7d');
  t.equal(sampleUnit(86_400_000 * 3 + 60_000), '4321m');
  t.equal(sampleUnit(1500), '1500T');
  t.equal(sampleUnit(1), '1T');
  t.equal(sampleUnit(61_000), '61s');
});

t.test('a count QuestDB takes is kept; one past it is null (GROUP BY)', async (t) => {
  t.equal(sampleUnit(2 ** 31 - 1), `${2 ** 31 - 1}T`);
  t.equal(sampleUnit(2 ** 31), null);
  t.equal(sampleUnit(30 * 86_400_000), '30d');
  t.equal(sampleUnit((600_000 * 3600 + 1) * 1000), null);
  t.equal(sampleUnit(86_400_000 * (2 ** 31 - 1)), `${2 ** 31 - 1}d`);
});
