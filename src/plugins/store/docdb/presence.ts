// Who uses a docdb database (issue 21; seed 001, importer behaviour 1: the importer writes only into a store nothing
// else uses). A database server is shared by design and has no reader table as LMDB has, so each process that opens
// the store as a primary (a broker's main thread, an importer) keeps a lease document in the default tenant's
// database, `{_id, host, pid, startedAt, seenAt}`, written at start, refreshed every PRESENCE_REFRESH_MS and removed
// at close. A lease not refreshed for PRESENCE_STALE_MS is a process that died (kill -9, a host lost): ignored.
// `seenAt` is the writer's clock: hosts apart by more than the stale time would see each other's leases wrongly.
// A broker's lease also names the broker (`brokerId`): the live brokers of a high-availability set are read from
// these leases when one of them must do something alone (Store.liveBrokers).
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Collection } from 'mongodb';
import type { PluginLogger } from '../../../plugin/contract.js';

/** The leases' collection, in the default tenant's database. */
export const PRESENCE = 'brokerPresence';
export const PRESENCE_REFRESH_MS = 5_000;
/** Four refreshes missed: its process is gone. */
export const PRESENCE_STALE_MS = 20_000;

export interface PresenceDoc {
  _id: string;
  host: string;
  pid: number;
  startedAt: string;
  /** ms since the epoch, the writer's clock. */
  seenAt: number;
  /** A broker's id (BrokerConfig.brokerId); absent in an importer's lease. */
  brokerId?: string;
}

export class Presence {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private timer: NodeJS.Timeout | undefined;
  private readonly startedAt = new Date().toISOString();

  constructor(
    private readonly coll: () => Collection<PresenceDoc>,
    private readonly log: PluginLogger,
    private readonly brokerId?: string,
  ) {}

  /** Writes the lease (awaited: a started broker is seen at once), then keeps it fresh. */
  async start(): Promise<void> {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.beat(), PRESENCE_REFRESH_MS);
    this.timer.unref();
    await this.beat();
  }

  private async beat(): Promise<void> {
    try {
      await this.coll().updateOne(
        { _id: this.id },
        {
          $set: {
            seenAt: Date.now(),
            host: hostname(),
            pid: process.pid,
            ...(this.brokerId === undefined ? {} : { brokerId: this.brokerId }),
          },
          $setOnInsert: { startedAt: this.startedAt },
        },
        { upsert: true },
      );
    } catch (e) {
      // The server away: the next beat writes it again (an importer meanwhile sees the lease go stale).
      this.log.debug({ err: e instanceof Error ? e.message : String(e) }, 'docdb: the presence lease could not be refreshed');
    }
  }

  /**
   * Removes the lease: a broker stopped cleanly does not hold the database for PRESENCE_STALE_MS. Not when the server
   * is out of reach (`reachable` false): closing would wait for it; the lease goes stale instead.
   */
  async stop(reachable: boolean): Promise<void> {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    if (!reachable) return;
    await this.coll()
      .deleteOne({ _id: this.id })
      .catch(() => {});
  }

  /** The ids of the brokers with a fresh lease (this one's too, once written), sorted. */
  async liveBrokers(): Promise<string[]> {
    const live = await this.coll()
      .find({ seenAt: { $gt: Date.now() - PRESENCE_STALE_MS } })
      .toArray();
    return live.flatMap((d) => (typeof d.brokerId === 'string' ? [d.brokerId] : [])).sort();
  }

  /** The other live users of the database, described; undefined when none. */
  async others(): Promise<string | undefined> {
    const now = Date.now();
    const live = await this.coll()
      .find({ _id: { $ne: this.id }, seenAt: { $gt: now - PRESENCE_STALE_MS } })
      .limit(10)
      .toArray();
    if (live.length === 0) return undefined;
    return live
      .map((d) => `${String(d.host)} pid ${String(d.pid)}, seen ${Math.max(0, Math.round((now - d.seenAt) / 1000))} s ago`)
      .join('; ');
  }
}
