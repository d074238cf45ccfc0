// ISO 8601 durations for aggrPeriodDuration (CIM 009 v1.8 §4.5.19, §6.3.x): P[n]Y[n]M[n]DT[n]H[n]M[n]S or P[n]W,
// and stepping a UTC instant by one. Written here because no registry package was approved for it.

export interface Duration {
  years: number;
  months: number;
  weeks: number;
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
}

// Integers everywhere; a decimal fraction only on seconds (the smallest unit the API needs).
const DURATION =
  /^P(?:(\d{1,9})Y)?(?:(\d{1,9})M)?(?:(\d{1,9})W)?(?:(\d{1,9})D)?(?:T(?:(\d{1,9})H)?(?:(\d{1,9})M)?(?:(\d{1,9}(?:[.,]\d{1,9})?)S)?)?$/;

/** The duration, or undefined when the text is not one (`P`, `PT`, a sign, a combined date-time form, ...). */
export function parseDuration(text: string): Duration | undefined {
  const m = DURATION.exec(text);
  if (m === null) return undefined;
  if (m.slice(1).every((g) => g === undefined)) return undefined;
  if (text.includes('T') && m[5] === undefined && m[6] === undefined && m[7] === undefined) return undefined;
  // P[n]W stands alone (ISO 8601-1 §5.5.2.4; CIM 009 lists it as its own form).
  if (m[3] !== undefined && (m[1] ?? m[2] ?? m[4] ?? m[5] ?? m[6] ?? m[7]) !== undefined) return undefined;
  const n = (g: string | undefined): number => (g === undefined ? 0 : Number(g.replace(',', '.')));
  return { years: n(m[1]), months: n(m[2]), weeks: n(m[3]), days: n(m[4]), hours: n(m[5]), minutes: n(m[6]), seconds: n(m[7]) };
}

/** A zero duration (PT0S, P0D): one period spanning the whole time range (CIM 009 §6.3.x aggrPeriodDuration). */
export function isZeroDuration(d: Duration): boolean {
  return d.years === 0 && d.months === 0 && d.weeks === 0 && d.days === 0 && d.hours === 0 && d.minutes === 0 && d.seconds === 0;
}

function daysInMonth(year: number, month0: number): number {
  return new Date(Date.UTC(year, month0 + 1, 0)).getUTCDate();
}

/** `ms` (UTC) plus the duration: calendar years and months first (day clamped to the month's end), then the rest. */
export function addDuration(ms: number, d: Duration): number {
  let t = ms;
  if (d.years !== 0 || d.months !== 0) {
    const date = new Date(ms);
    const totalMonths = date.getUTCFullYear() * 12 + date.getUTCMonth() + d.years * 12 + d.months;
    const year = Math.floor(totalMonths / 12);
    const month0 = totalMonths - year * 12;
    const day = Math.min(date.getUTCDate(), daysInMonth(year, month0));
    const timeOfDay = ms - Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
    t = Date.UTC(year, month0, day) + timeOfDay;
  }
  return t + ((d.weeks * 7 + d.days) * 86_400 + d.hours * 3600 + d.minutes * 60) * 1000 + Math.round(d.seconds * 1000);
}
