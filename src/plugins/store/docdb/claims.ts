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

/** Longest a claim whose write landed waits for its release (ClaimReleases). */
const RELEASE_MS = 200;
/** Most releases gathered before they are sent at once. */
const RELEASE_MAX = 500;

/**
 * The releases of claims whose write landed, gathered and sent as one delete per database every RELEASE_MS (or
 * RELEASE_MAX of them), not one delete per write: a PATCH on FerretDB was four commands, the release one of them
 * (issue 17, the broker's CPU per request). Waiting costs nothing: once the entity moved on from the version a claim
 * names, only a writer that read that old version can meet the claim, and its conditional write would lose anyway.
 * A write that failed releases its claim at once (`release`): the entity may still be at that version. A release
 * lost (the server down, the process ended) is a claim taken over after STALE_MS.
 */
export class ClaimReleases {
  private readonly pending = new Map<string, { claims: Collection<ClaimDoc>; ids: string[] }>();
  private size = 0;
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> = Promise.resolve();

  constructor(private readonly onError: (e: unknown) => void) {}

  add(claims: Collection<ClaimDoc>, claimed: ReadonlyMap<string, number>): void {
    if (claimed.size === 0) return;
    const key = claims.dbName;
    let entry = this.pending.get(key);
    if (entry === undefined) this.pending.set(key, (entry = { claims, ids: [] }));
    for (const [id, v] of claimed) entry.ids.push(claimId(id, v));
    this.size += claimed.size;
    if (this.size >= RELEASE_MAX) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), RELEASE_MS).unref();
  }

  /** Sends what is gathered; resolves once it and every earlier send are done (errors go to onError). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = [...this.pending.values()];
    this.pending.clear();
    this.size = 0;
    const before = this.sending;
    this.sending = (async () => {
      await before;
      for (const { claims, ids } of batch) await claims.deleteMany({ _id: { $in: ids } }).catch(this.onError);
    })();
    return this.sending;
  }
}
