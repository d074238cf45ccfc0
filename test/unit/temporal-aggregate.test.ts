// Aggregated temporal representation (CIM 009 v1.8 §4.5.19): the eight methods, periods of aggrPeriodDuration (each
// one whole, cut only by the asked range's end), empty periods left out, non-numeric values, and refused method lists.
import t from 'tap';
import { aggregate, parseAggrMethods, parseAggrPeriod, periodBound, type Sample } from '../../src/ngsild/temporal/aggregate.js';
import { LdError } from '../../src/ngsild/problem.js';

const T0 = Date.parse('2024-01-01T00:00:00Z');
const min = (m: number): number => T0 + m * 60_000;
const iso = (m: number): string => new Date(min(m)).toISOString().replace('.000Z', 'Z');
const s = (value: unknown, m: number): Sample => ({ value, t: min(m) });
const badRequestOf = (fn: () => unknown): boolean => {
  try {
    fn();
    return false;
  } catch (e) {
    return e instanceof LdError && e.kind === 'BadRequestData';
  }
};

t.test('every method over one period spanning the asked range', async (t) => {
  const r = aggregate(
    [s(2, 0), s(4, 1), s(4, 2), s(6, 3)],
    ['totalCount', 'distinctCount', 'sum', 'avg', 'min', 'max', 'stddev', 'sumsq'],
    undefined,
    min(0),
    min(10),
  );
  const whole = (v: unknown) => [[v, iso(0), iso(10)]];
  t.same(r.totalCount, whole(4));
  t.same(r.distinctCount, whole(3));
  t.same(r.sum, whole(16));
  t.same(r.avg, whole(4));
  t.same(r.min, whole(2));
  t.same(r.max, whole(6));
  t.same(r.sumsq, whole(72));
  t.ok(Math.abs((r.stddev[0]![0] as number) - Math.sqrt(8 / 3)) < 1e-12, 'sample standard deviation');
});

t.test('periods step by the duration from the range start; empty periods are left out', async (t) => {
  const period = parseAggrPeriod('PT2M');
  const r = aggregate([s(1, 0), s(2, 1), s(5, 6)], ['sum', 'totalCount'], period, min(0), min(8));
  t.same(r.sum, [
    [3, iso(0), iso(2)],
    [5, iso(6), iso(8)],
  ]);
  t.same(r.totalCount, [
    [2, iso(0), iso(2)],
    [1, iso(6), iso(8)],
  ]);
});

t.test('without bounds the range runs from the first sample to just after the last', async (t) => {
  const r = aggregate([s(1, 3), s(2, 5)], ['max'], undefined, undefined, undefined);
  t.same(r.max, [[2, iso(3), new Date(min(5) + 1).toISOString()]]);
});

t.test('without the range end, the last period still spans the whole duration', async (t) => {
  const r = aggregate([s(67, 0), s(53, 62), s(40, 124)], ['avg'], parseAggrPeriod('PT1H'), undefined, undefined);
  t.same(r.avg, [
    [67, iso(0), iso(60)],
    [53, iso(60), iso(120)],
    [40, iso(120), iso(180)],
  ]);
  const day = aggregate([s(80, 2), s(120, 4)], ['max'], parseAggrPeriod('P1D'), min(0), undefined);
  t.same(day.max, [[120, iso(0), iso(24 * 60)]], 'a day, not up to the last sample');
});

t.test('periods far from the range start are found without stepping through the empty ones', async (t) => {
  const from = Date.parse('0001-01-01T00:00:00Z');
  const r = aggregate([s(5, 0), s(7, 0)], ['sum'], parseAggrPeriod('PT1S'), from, undefined);
  t.same(r.sum, [[12, iso(0), new Date(min(0) + 1000).toISOString().replace('.000Z', 'Z')]]);
  const monthly = aggregate([s(1, 0)], ['sum'], parseAggrPeriod('P1M'), Date.parse('1900-01-01T00:00:00Z'), undefined);
  t.same(monthly.sum, [[1, '2024-01-01T00:00:00Z', '2024-02-01T00:00:00Z']], 'calendar periods step from the range start');
});

t.test('period bounds are written to the second, with a fraction only when they have one', async (t) => {
  t.equal(periodBound(Date.parse('2020-08-01T12:03:00Z')), '2020-08-01T12:03:00Z');
  t.equal(periodBound(Date.parse('2020-08-01T12:03:00.250Z')), '2020-08-01T12:03:00.250Z');
});

t.test('the last period is cut at the range end', async (t) => {
  const r = aggregate([s(1, 0), s(1, 4)], ['totalCount'], parseAggrPeriod('PT3M'), min(0), min(5));
  t.same(r.totalCount, [
    [1, iso(0), iso(3)],
    [1, iso(3), iso(5)],
  ]);
});

t.test('arithmetic methods skip non-numbers; min and max order strings; counts count everything', async (t) => {
  const r = aggregate(
    [s('b', 0), s('a', 1), s(true, 2), s({ x: 1 }, 3), s({ x: 1 }, 4)],
    ['sum', 'avg', 'min', 'max', 'totalCount', 'distinctCount'],
    undefined,
    min(0),
    min(5),
  );
  t.same(r.sum, []);
  t.same(r.avg, []);
  t.same(r.min, [['a', iso(0), iso(5)]]);
  t.same(r.max, [['b', iso(0), iso(5)]]);
  t.same(r.totalCount, [[5, iso(0), iso(5)]]);
  t.same(r.distinctCount, [[4, iso(0), iso(5)]]);
});

t.test('no samples: every method has an empty list', async (t) => {
  t.same(aggregate([], ['sum', 'max'], undefined, min(0), min(1)), { sum: [], max: [] });
});

t.test('a single value has stddev 0', async (t) => {
  t.same(aggregate([s(3, 0)], ['stddev'], undefined, min(0), min(1)).stddev, [[0, iso(0), iso(1)]]);
});

t.test('aggrMethods: known names, duplicates folded; unknown or empty refused', async (t) => {
  t.same(parseAggrMethods('sum,avg,sum'), ['sum', 'avg']);
  t.same(parseAggrMethods(' max , min'), ['max', 'min']);
  for (const bad of [undefined, '', 'mean', 'sum,', 'SUM', 'count']) {
    t.ok(
      badRequestOf(() => parseAggrMethods(bad)),
      String(bad),
    );
  }
});

t.test('aggrPeriodDuration: zero is the whole range; malformed is refused', async (t) => {
  t.equal(parseAggrPeriod(undefined), undefined);
  t.equal(parseAggrPeriod('PT0S'), undefined);
  t.equal(parseAggrPeriod('P1D')?.days, 1);
  for (const bad of ['P', '1H', 'PT-1H', 'P1.5M', 'PT0.0001S'])
    t.ok(
      badRequestOf(() => parseAggrPeriod(bad)),
      bad,
    );
});
