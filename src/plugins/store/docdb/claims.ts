// Write claims: what makes a conditional write atomic on a server whose conditional update is not. MongoDB applies
// `replaceOne({_id, v})` atomically to one document, so a lost race matches nothing. FerretDB 1.x (SQLite) finds the
// document and then writes it by id: two writers that read one version both match and one update is lost (measured:
// 40 concurrent increments ended at 6). Its unique _id is enforced by SQLite, so there a writer first inserts the
// claim `<entity id>\n<version read>`: of the writers that read one version, one inserts the claim and writes; the
// others get a duplicate key and read again.
//
// Why a write under a claim needs no condition on the version (FerretDB pushes down to SQLite a filter of `_id`
// alone, any other filter is a scan of the collection decoded document by document in FerretDB, issue 17): a claim
// is released no sooner than HOLD_MS after its write was acknowledged (ClaimReleases). A writer whose claim of
// (id, v) succeeds read v at time r and claimed at c; had another writer moved the entity on from v meanwhile, it did
// so after r under the claim (id, v), released after that write + HOLD_MS, so c - r > HOLD_MS. A writer that measures
// less than HOLD_MS from sending its read to the claim's answer therefore still holds the entity at v; one that
// measures more reads the version again before writing (`needsCheck`). Durations on each process's monotonic clock
// only: no clock is compared across brokers.
//
// A claim older than STALE_MS is taken over (its writer died between claim and release). A writer sends its write
// without the condition only within FRESH_MS of its claim's answer; that write is executed by the server within the
// command timeout of the broker's client (docdb-store.ts COMMAND_TIMEOUT_MS) or not at all (the connection closed),
// so STALE_MS exceeds both: a claim is never taken over from a writer whose unconditioned write may still land.
import type { Collection } from 'mongodb';

/** The claims of a tenant's database: `{_id: '<entity id>\n<version>', at: ms}`. */
export const CLAIMS = 'writeClaims';

/**
 * A claim older than this was left by a writer that died between claim and release: it may be taken over. More than
 * FRESH_MS and the command timeout (docdb-store.ts COMMAND_TIMEOUT_MS, 60 s) together (see above).
 */
const STALE_MS = 75_000;

/** A write sent within this of its claim's answer goes without a condition on the version (see above). */
export const FRESH_MS = 5_000;

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

/**
 * Least time between a write's acknowledgement and the release of its claim, and so the longest a writer may take from
 * sending its read to the answer of its claim and still write without reading the version again (see above).
 */
export const HOLD_MS = 1000;

/** A writer that took this long from its read (performance.now() before it) to its claim's answer checks the version. */
export function needsCheck(readAt: number, now = performance.now()): boolean {
  return now - readAt >= HOLD_MS;
}

/** How often held releases are looked at. */
const RELEASE_MS = 200;
/** Most claims one delete names. */
const RELEASE_MAX = 500;

/**
 * The releases of claims, gathered and sent as one delete per database, each no sooner than HOLD_MS after it was
 * added (see above: that is what lets a claimed write go without a condition on the version), not one delete per
 * write: a PATCH on FerretDB was four commands, the release one of them (issue 17, the broker's CPU per request). A
 * write that failed releases its claim the same way: it may have landed all the same (an answer lost). A release
 * lost (the server down, the process ended) is a claim taken over after STALE_MS.
 */
export class ClaimReleases {
  /** In the order added, so the ripe ones are a prefix. */
  private readonly held: Array<{ claims: Collection<ClaimDoc>; id: string; at: number }> = [];
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> = Promise.resolve();

  constructor(
    private readonly onError: (e: unknown) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  add(claims: Collection<ClaimDoc>, claimed: ReadonlyMap<string, number>): void {
    if (claimed.size === 0) return;
    const at = this.now();
    for (const [id, v] of claimed) this.held.push({ claims, id: claimId(id, v), at });
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.sendRipe();
    }, RELEASE_MS).unref();
  }

  /** Sends the releases held HOLD_MS; resolves once they and every earlier send are done (errors go to onError). */
  sendRipe(): Promise<void> {
    const now = this.now();
    let n = 0;
    while (n < this.held.length && now - this.held[n]!.at >= HOLD_MS) n++;
    const r = this.send(n);
    if (this.held.length > 0)
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        void this.sendRipe();
      }, RELEASE_MS).unref();
    return r;
  }

  /** Sends every release held, ripe or not: for tests, and `close` once `ripe` resolved. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    return this.send(this.held.length);
  }

  /** Resolves once every release held now is ripe (close waits for it, then flushes). */
  async ripe(): Promise<void> {
    const last = this.held.at(-1);
    if (last === undefined) return;
    const wait = HOLD_MS - (this.now() - last.at);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }

  private send(n: number): Promise<void> {
    const batch = this.held.splice(0, n);
    const before = this.sending;
    this.sending = (async () => {
      await before;
      const perDb = new Map<string, { claims: Collection<ClaimDoc>; ids: string[] }>();
      for (const { claims, id } of batch) {
        let entry = perDb.get(claims.dbName);
        if (entry === undefined) perDb.set(claims.dbName, (entry = { claims, ids: [] }));
        entry.ids.push(id);
      }
      for (const { claims, ids } of perDb.values())
        for (let i = 0; i < ids.length; i += RELEASE_MAX)
          await claims.deleteMany({ _id: { $in: ids.slice(i, i + RELEASE_MAX) } }).catch(this.onError);
    })();
    return this.sending;
  }
}
