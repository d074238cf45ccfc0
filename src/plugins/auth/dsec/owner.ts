// A subscription owner as dsec keeps it (seed 000 §2.6, §3 owner rows, §5.3): the maker's credential, saved with the
// time it was saved, restored with the moment it stops holding: the credential's `validUntil` (VC 1.1:
// `expirationDate`), or `--dsecOwnerMaxAge` seconds after it was saved when that is above 0, whichever comes first.
// A restored owner is the bare credential, as a request's identity is, so every hook decides on it alike; when it
// stops holding is kept beside it, in this thread, for the hooks to refuse it past that moment.

interface SavedOwner {
  v: 1;
  /** When it was saved, ms since the epoch. */
  savedAt: number;
  credential: unknown;
}

/** Restored owners of this thread and when each stops holding (ms since the epoch; Infinity: never). */
const ENDS = new WeakMap<object, number>();

/** The owner record's text of a request's identity (its credential); null for no one (an anonymous request). */
export function saveOwner(identity: unknown, now: number): string | null {
  if (identity === null || identity === undefined) return null;
  return JSON.stringify({ v: 1, savedAt: now, credential: identity } satisfies SavedOwner);
}

/** The owner's credential of a record's text; null when the text is no owner record or the owner no longer holds. */
export function restoreOwner(text: string, maxAgeSeconds: number, now: number): object | null {
  let saved: Partial<SavedOwner>;
  try {
    saved = JSON.parse(text) as Partial<SavedOwner>;
  } catch {
    return null;
  }
  if (saved === null || typeof saved !== 'object' || saved.v !== 1 || typeof saved.savedAt !== 'number') return null;
  const credential = saved.credential;
  if (credential === null || typeof credential !== 'object') return null;
  let end = credentialEnd(credential as Record<string, unknown>);
  if (maxAgeSeconds > 0) end = Math.min(end, saved.savedAt + maxAgeSeconds * 1000);
  if (!(end > now)) return null;
  ENDS.set(credential, end);
  return credential;
}

/** When a restored owner stops holding; undefined for any other identity (a request's, which its token bounds). */
export function ownerEnd(identity: unknown): number | undefined {
  return identity !== null && typeof identity === 'object' ? ENDS.get(identity) : undefined;
}

/** seed 000 §3: a restored owner whose lifetime is over no longer holds (the clock is read only for an owner). */
export function ownerEnded(identity: unknown): boolean {
  const end = ownerEnd(identity);
  return end !== undefined && end <= Date.now();
}

/**
 * When the credential stops holding: `validUntil` (VC 2.0) else `expirationDate` (VC 1.1); Infinity when it names
 * neither. One it names but that is no date ends at once: a lifetime that cannot be read is not taken as none.
 */
function credentialEnd(credential: Record<string, unknown>): number {
  const end = credential['validUntil'] ?? credential['expirationDate'];
  if (end === undefined || end === null) return Infinity;
  const ms = typeof end === 'string' ? Date.parse(end) : NaN;
  return Number.isNaN(ms) ? -Infinity : ms;
}
