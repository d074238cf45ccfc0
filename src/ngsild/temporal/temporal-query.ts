// The temporal query (CIM 009 v1.8 §4.11, §6.3.x): timerel before/after/between with timeAt and endTimeAt on a
// timeproperty, and lastN, checked and turned into the history's time window. Bad combinations are 400s.
import { badRequest } from '../problem.js';
import { isDateTime } from '../entity/syntax.js';
import type { TimeProperty, TimeWindow } from './history-model.js';

export const TIME_PROPERTIES: readonly TimeProperty[] = ['observedAt', 'createdAt', 'modifiedAt', 'deletedAt'];

export interface TemporalQueryInput {
  timerel?: string;
  timeAt?: string;
  endTimeAt?: string;
  timeproperty?: string;
  lastN?: string | number;
}

export interface TemporalQuery {
  timeproperty: TimeProperty;
  /** Absent without timerel: every instance. */
  window?: TimeWindow;
  lastN?: number;
  /** The asked bounds in ms (for aggregation periods and Content-Range). */
  from?: number;
  to?: number;
}

/** A zone offset whose `+` a URL query turned into a blank (`timeAt=2024-01-31T10:00:00+01:00` sent unencoded). */
const BLANKED_OFFSET = /T[\d:.]+ \d{2}:\d{2}$/;

function instant(name: string, rawText: string): number {
  // A date-time never holds a blank, so one before a trailing hh:mm can only be the offset's decoded `+`.
  const text = BLANKED_OFFSET.test(rawText) ? `${rawText.slice(0, -6)}+${rawText.slice(-5)}` : rawText;
  // A date alone (2024-01-31) is accepted as its midnight UTC; anything else must be a full date-time.
  const full = /^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text;
  if (!isDateTime(full)) throw badRequest(`${name}: '${text.slice(0, 60)}' is not an ISO 8601 date-time`);
  const withZone = /(Z|[+-]\d{2}:\d{2})$/.test(full) ? full : `${full}Z`;
  const ms = Date.parse(withZone);
  if (Number.isNaN(ms)) throw badRequest(`${name}: '${text.slice(0, 60)}' is not an ISO 8601 date-time`);
  return ms;
}

export function parseTemporalQuery(input: TemporalQueryInput): TemporalQuery {
  const prop = input.timeproperty ?? 'observedAt';
  if (!(TIME_PROPERTIES as readonly string[]).includes(prop))
    throw badRequest(`timeproperty: '${prop}' is not one of ${TIME_PROPERTIES.join(', ')}`);
  const q: TemporalQuery = { timeproperty: prop as TimeProperty };
  if (input.lastN !== undefined) {
    const text = String(input.lastN);
    if (!/^[1-9]\d{0,8}$/.test(text)) throw badRequest(`lastN: '${text.slice(0, 30)}' is not a positive integer`);
    q.lastN = Number(text);
  }
  const { timerel, timeAt, endTimeAt } = input;
  if (timerel === undefined) {
    if (timeAt !== undefined || endTimeAt !== undefined) throw badRequest('timeAt and endTimeAt need timerel');
    return q;
  }
  if (timerel !== 'before' && timerel !== 'after' && timerel !== 'between')
    throw badRequest(`timerel: '${timerel.slice(0, 30)}' is not one of before, after, between`);
  if (timeAt === undefined) throw badRequest(`timerel=${timerel} needs timeAt`);
  const at = instant('timeAt', timeAt);
  if (timerel === 'between') {
    if (endTimeAt === undefined) throw badRequest('timerel=between needs endTimeAt');
    const end = instant('endTimeAt', endTimeAt);
    if (at >= end) throw badRequest(`timeAt ${timeAt} is not before endTimeAt ${endTimeAt}`);
    q.from = at;
    q.to = end;
  } else {
    if (endTimeAt !== undefined) throw badRequest(`endTimeAt is only for timerel=between, not ${timerel}`);
    // CIM 009 §4.11: before is strictly before timeAt; after is at or after it.
    if (timerel === 'before') q.to = at;
    else q.from = at;
  }
  q.window = { timeproperty: q.timeproperty };
  if (q.from !== undefined) q.window.from = q.from;
  if (q.to !== undefined) q.window.to = q.to;
  return q;
}
