// Write claims: what makes a conditional write atomic on a server whose conditional update is not. MongoDB applies
// `replaceOne({_id, v})` atomically to one document, so a lost race matches nothing. FerretDB 1.x (SQLite) finds the
// document and then writes it by id: two writers that read one version both match and one update is lost (measured:
// 40 concurrent increments ended at 6). Its unique _id is enforced by SQLite, so there a writer first inserts the
// claim `<entity id>\n<version read>`: of the writers that read one version, one inserts the claim and writes; the
// others get a duplicate key and read again. The claim is removed once the write is done; a writer holding a claim
// that no longer matches (removed, the entity moved on) still writes conditionally and loses as on MongoDB.
import type { Collection } from 'mongodb';

/** The claims of a tenant's database: `{_id: '<entity id>\n<version>', at: ms}`. */
export const CLAIMS = 'writeClaims';

/** A claim older than this was left by a writer that died between claim and release: it may be taken over. */
const STALE_MS = 30_000;

export interface ClaimDoc {
  _id: string;
  at: number;
}

const claimId = (id: string, version: number): string => `${id}\n${version}`;

/** The ids of `wanted` (entity id → version read) this writer claimed; the others are being written by another. */
export async function claim(claims: Collection<ClaimDoc>, wanted: ReadonlyMap<string, number>): Promise<Set<string>> {
  const now = Date.now();
  const docs = [...wanted].map(([id, v]) => ({ _id: claimId(id, v), at: now }));
  const got = new Set(wanted.keys());
  if (docs.length === 0) return got;
  try {
    await claims.insertMany(docs, { ordered: false });
    return got;
  } catch (e) {
    const errors = (e as { writeErrors?: unknown }).writeErrors;
    const list = (Array.isArray(errors) ? errors : errors === undefined ? [] : [errors]) as Array<{ index: number; code?: number }>;
    if (list.length === 0 || list.some((w) => w.code !== 11000)) throw e;
    const taken = list.map((w) => docs[w.index]!._id);
    for (const w of list) got.delete([...wanted.keys()][w.index]!);
    // A claim left by a dead writer: removed, so that the next round can take it.
    await claims.deleteMany({ _id: { $in: taken }, at: { $lt: now - STALE_MS } });
    return got;
  }
}

export async function release(claims: Collection<ClaimDoc>, claimed: ReadonlyMap<string, number>): Promise<void> {
  if (claimed.size === 0) return;
  await claims.deleteMany({ _id: { $in: [...claimed].map(([id, v]) => claimId(id, v)) } });
}
