// ISO 8601 durations for aggrPeriodDuration (CIM 009 v1.8 §6.3.x): the accepted forms, the refused ones, and
// stepping a UTC instant (calendar months clamp to the month's end).
import t from 'tap';
import { parseDuration, addDuration, isZeroDuration } from '../../src/ngsild/temporal/duration.js';

const ms = (iso: string): number => Date.parse(iso);
const iso = (n: number): string => new Date(n).toISOString();

t.test('every element of P[n]Y[n]M[n]DT[n]H[n]M[n]S is read', async (t) => {
  t.same(parseDuration('P3Y6M4DT12H30M5S'), { years: 3, months: 6, weeks: 0, days: 4, hours: 12, minutes: 30, seconds: 5 });
  t.same(parseDuration('PT1M'), { years: 0, months: 0, weeks: 0, days: 0, hours: 0, minutes: 1, seconds: 0 });
  t.same(parseDuration('P1M')?.months, 1, 'M before T is months');
  t.equal(parseDuration('PT0.5S')?.seconds, 0.5);
  t.equal(parseDuration('PT1,25S')?.seconds, 1.25, 'a comma is a decimal sign too');
  t.equal(parseDuration('P2W')?.weeks, 2);
});

t.test('zero durations span the whole range', async (t) => {
  t.ok(isZeroDuration(parseDuration('PT0S')!));
  t.ok(isZeroDuration(parseDuration('P0D')!));
  t.notOk(isZeroDuration(parseDuration('PT1S')!));
});

t.test('malformed durations are refused', async (t) => {
  for (const bad of [
    '',
    'P',
    'PT',
    '1D',
    'P1H',
    'PT1D',
    'P-1D',
    '-P1D',
    'P1.5D',
    'P1W2D',
    'P1DT',
    'p1d',
    'P1D ',
    'P2024-01-01',
    'PT1H30',
    'P1Y1Y',
    'P1S',
    'PT1.S',
  ])
    t.equal(parseDuration(bad), undefined, JSON.stringify(bad));
});

t.test('adding days, hours, minutes and seconds is exact in UTC', async (t) => {
  t.equal(iso(addDuration(ms('2024-03-30T10:00:00Z'), parseDuration('P1DT2H3M4S')!)), '2024-03-31T12:03:04.000Z');
  t.equal(iso(addDuration(ms('2024-03-01T00:00:00Z'), parseDuration('P1W')!)), '2024-03-08T00:00:00.000Z');
  t.equal(iso(addDuration(ms('2024-03-01T00:00:00Z'), parseDuration('PT0.25S')!)), '2024-03-01T00:00:00.250Z');
});

t.test('adding months and years follows the calendar, clamping the day', async (t) => {
  t.equal(iso(addDuration(ms('2024-01-31T08:00:00Z'), parseDuration('P1M')!)), '2024-02-29T08:00:00.000Z', 'leap February');
  t.equal(iso(addDuration(ms('2023-01-31T00:00:00Z'), parseDuration('P1M')!)), '2023-02-28T00:00:00.000Z');
  t.equal(iso(addDuration(ms('2024-11-15T00:00:00Z'), parseDuration('P2M')!)), '2025-01-15T00:00:00.000Z', 'across a year');
  t.equal(iso(addDuration(ms('2024-02-29T00:00:00Z'), parseDuration('P1Y')!)), '2025-02-28T00:00:00.000Z');
  t.equal(iso(addDuration(ms('2024-01-31T00:00:00Z'), parseDuration('P1M1D')!)), '2024-03-01T00:00:00.000Z', 'months first, then days');
});
