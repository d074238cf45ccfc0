// Counted members of a document (DocCollection.bump): kept apart from the document a put writes, so that an update
// of a document read a moment ago never takes back a count made since; shown over the document's own members.
import type { BumpChange } from '../contract.js';

/** The counted members of one document: member name → its counters. */
export type Bumped = Record<string, Record<string, unknown>>;

/** `bumped` with `change` applied to `member`: numbers of `inc` added (absent: 0), values of `set` written. */
export function applyBump(bumped: Bumped | undefined, member: string, change: BumpChange): Bumped {
  const out: Bumped = { ...bumped };
  const m: Record<string, unknown> = { ...out[member] };
  for (const [k, n] of Object.entries(change.inc ?? {})) m[k] = (typeof m[k] === 'number' ? m[k] : 0) + n;
  for (const [k, v] of Object.entries(change.set ?? {})) m[k] = v;
  out[member] = m;
  return out;
}

/** The document as get and list answer it: each counted member over the document's own. */
export function withBumped(doc: Record<string, unknown>, bumped: Bumped | undefined): Record<string, unknown> {
  if (bumped === undefined) return doc;
  const out = { ...doc };
  for (const [member, counts] of Object.entries(bumped)) {
    const own = out[member];
    out[member] = { ...(typeof own === 'object' && own !== null && !Array.isArray(own) ? own : {}), ...counts };
  }
  return out;
}
