// A subscription owner as dsec keeps it (seed 000 §2.6, §3 owner rows, §5.3): the maker's credential, saved with the
// time it was saved, restored with the moment it stops holding: the credential's `validUntil` (VC 1.1:
// `expirationDate`), or `--dsecOwnerMaxAge` seconds after it was saved when that is above 0, whichever comes first.

/** The member that marks a restored owner (a request's identity is the bare credential). */
const OWNER = 'ldbroker:dsec:owner';

/** A restored owner: its credential and when it stops holding (ms since the epoch; Infinity: never). */
export interface OwnerIdentity {
  [OWNER]: true;
  credential: unknown;
  notAfter: number;
}

interface SavedOwner {
  v: 1;
  /** When it was saved, ms since the epoch. */
  savedAt: number;
  credential: unknown;
}

/** The owner record's text of a request's identity (its credential); null for no one (an anonymous request). */
export function saveOwner(identity: unknown, now: number): string | null {
  if (identity === null || identity === undefined) return null;
  // A subscription updated by a restored owner is not a case (owners never send requests); kept as its credential.
  const credential = isOwner(identity) ? identity.credential : identity;
  return JSON.stringify({ v: 1, savedAt: now, credential } satisfies SavedOwner);
}

/** The owner of a record's text; null when the text is no owner record or the owner no longer holds at `now`. */
export function restoreOwner(text: string, maxAgeSeconds: number, now: number): OwnerIdentity | null {
  let saved: Partial<SavedOwner>;
  try {
    saved = JSON.parse(text) as Partial<SavedOwner>;
  } catch {
    return null;
  }
  if (saved === null || typeof saved !== 'object' || saved.v !== 1 || typeof saved.savedAt !== 'number') return null;
  const credential = saved.credential;
  if (credential === null || typeof credential !== 'object') return null;
  let notAfter = credentialEnd(credential as Record<string, unknown>);
  if (maxAgeSeconds > 0) notAfter = Math.min(notAfter, saved.savedAt + maxAgeSeconds * 1000);
  if (!(notAfter > now)) return null;
  return { [OWNER]: true, credential, notAfter };
}

/**
 * The credential a decision reads: a request's identity as it is, a restored owner's credential while it holds;
 * undefined for an owner that no longer holds (the caller denies).
 */
export function credentialOf(identity: unknown, now: number): unknown {
  if (!isOwner(identity)) return identity;
  return identity.notAfter > now ? identity.credential : undefined;
}

export function isOwner(identity: unknown): identity is OwnerIdentity {
  return identity !== null && typeof identity === 'object' && (identity as Record<string, unknown>)[OWNER] === true;
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
