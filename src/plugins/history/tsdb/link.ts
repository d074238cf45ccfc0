// A thread's link to the tsdb writer thread (channel.ts): its own channel, opened by a hello the writer answers;
// rows go out as the facts of their writes (facts.ts) without waiting (unless the writer's buffer is full:
// back-pressure), and a sync resolves once what this thread sent before it is in QuestDB and visible to reads.
import { randomBytes } from 'node:crypto';
import { BroadcastChannel, isMainThread, threadId } from 'node:worker_threads';
import type { FromWriter, Greeting, ToWriter } from './channel.js';
import type { FactBatch } from './rows.js';
import { Bytes, type WriteFacts } from './facts.js';
import type { HistoryLag } from '../../../history/contract.js';

/** How long an instance waits for the writer's welcome at open. */
const WELCOME_MS = 10_000;
const HELLO_EVERY_MS = 50;
/** How long a sync may take: QuestDB's own request timeout plus the wait for its WAL to apply. */
const SYNC_MS = 25_000;
/** How long a closing instance waits for the writer to say it holds every row the instance sent (bye). */
const BYE_MS = 2_000;
/**
 * How long rows wait in the front's thread before they go to the writer (`open`'s default there), and how many
 * bytes of facts go at once. A message costs its sender about 7 µs whatever it holds (the channel, and waking the
 * writer thread): posted per turn of the loop, the front's carried one PATCH's row under load (bench/temporal-tsdb.ts,
 * a profile of the front); held 10 ms, the hand-off costs under 1.1 µs a PATCH, less than a SharedArrayBuffer ring
 * would (bench/micro/tsdb-handoff.ts). The writer holds rows up to a second anyway (writer.ts LINGER_MS); a read's sync, and the
 * writer's close, first ask every holding instance for what it holds (flush, writer-thread.ts), so no row waits here
 * past either, even in an instance never closed (the front's inline pipeline context is not). A pipeline thread is
 * ended by its pool without a word, so it posts at the end of each turn, which there is one task of requests the
 * front gathered for it.
 */
export const FRONT_HOLD_MS = 10;
const HOLD_BYTES = 1 << 20;
/** Buffers kept for the tenants of the next hold. */
const MAX_SPARE = 4;

/** A tenant's facts held (send), not yet posted. */
interface Held {
  tenant: string;
  bytes: Bytes;
  inst: number;
  ent: number;
}

export class WriterLink {
  private full = false;
  /** The writer's last word on its lag (channel.ts `lag`). */
  lag: HistoryLag = { rows: 0, seconds: 0 };
  private readonly waiters: Array<() => void> = [];
  private readonly syncs = new Map<string, { resolve: () => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private next = 0;
  /** Rows handed in the last holdMs, per tenant, not yet posted (send); `spare`: their buffers, for the next hold. */
  private readonly pending = new Map<string, Held>();
  private readonly spare: Bytes[] = [];
  private pendingBytes = 0;
  private holding: NodeJS.Timeout | NodeJS.Immediate | undefined;
  /** Resolves close once the writer answered bye. */
  private bye: (() => void) | undefined;

  private constructor(
    private readonly main: BroadcastChannel,
    private readonly own: BroadcastChannel,
    private readonly holdMs: number,
  ) {
    main.onmessage = (ev: MessageEvent): void => {
      const m = ev.data as Greeting;
      if (m.k === 'lag') this.lag = { rows: m.rows, seconds: m.seconds, refused: m.refused };
      if (m.k !== 'pressure') return;
      this.full = m.full;
      if (!m.full) for (const w of this.waiters.splice(0)) w();
    };
    own.onmessage = (ev: MessageEvent): void => {
      const m = ev.data as FromWriter;
      if (m.k === 'bye') {
        this.bye?.();
        return;
      }
      if (m.k === 'flush') {
        this.post();
        this.own.postMessage({ k: 'flushed', n: m.n } satisfies ToWriter);
        return;
      }
      const s = this.syncs.get(m.id);
      if (s === undefined) return;
      this.syncs.delete(m.id);
      clearTimeout(s.timer);
      if (m.error === undefined) s.resolve();
      else s.reject(new Error(m.error));
    };
  }

  /** `holdMs`: how long rows wait here before they are posted (0: at the end of the turn). */
  static async open(channel: string, holdMs = isMainThread ? FRONT_HOLD_MS : 0): Promise<WriterLink> {
    const name = `${channel}:${threadId}:${randomBytes(4).toString('hex')}`;
    const main = new BroadcastChannel(channel);
    const own = new BroadcastChannel(name);
    // The writer thread may not listen yet (it starts with the primary instance): hello again until it answers.
    await new Promise<void>((resolve, reject) => {
      const hello = (): void => main.postMessage({ k: 'hello', name, hold: holdMs > 0 } satisfies Greeting);
      const again = setInterval(hello, HELLO_EVERY_MS);
      const timer = setTimeout(() => {
        clearInterval(again);
        main.onmessage = (): void => {};
        main.close();
        own.close();
        reject(new Error('the tsdb writer thread did not answer'));
      }, WELCOME_MS);
      main.onmessage = (ev: MessageEvent): void => {
        const m = ev.data as Greeting;
        if (m.k !== 'welcome' || m.name !== name) return;
        clearTimeout(timer);
        clearInterval(again);
        resolve();
      };
      hello();
    });
    // Neither channel keeps a thread alive.
    main.unref();
    own.unref();
    return new WriterLink(main, own, holdMs);
  }

  /**
   * Hands the rows of `facts` (a tenant's) to the writer, waiting first while its buffer is full: their bytes are
   * copied (`facts` may be reused at once) and go in one message with every other row this instance is handed within
   * its hold, one buffer per tenant. Row objects cost a clone per field, and a message per write cost more than its
   * rows. Returns nothing when they are queued at once (no promise for the write to wait for), else a promise of
   * their turn.
   */
  send(tenant: string, facts: WriteFacts): Promise<void> | undefined {
    if (this.full) return this.sendWhenRoom(tenant, Buffer.from(facts.bytes.view()), facts.inst, facts.ent);
    this.queue(tenant, facts.bytes.buf, facts.bytes.len, facts.inst, facts.ent);
    return undefined;
  }

  /** Waits while the writer's buffer is full (the waiters wake in order, before any later send runs), then queues. */
  private async sendWhenRoom(tenant: string, bytes: Buffer, inst: number, ent: number): Promise<void> {
    while (this.full) await new Promise<void>((res) => this.waiters.push(res));
    this.queue(tenant, bytes, bytes.length, inst, ent);
  }

  /** Holds the first `n` bytes of `bytes`. */
  private queue(tenant: string, bytes: Buffer, n: number, inst: number, ent: number): void {
    let p = this.pending.get(tenant);
    if (p === undefined) {
      const held = this.spare.pop() ?? new Bytes();
      held.len = 0;
      p = { tenant, bytes: held, inst: 0, ent: 0 };
      this.pending.set(tenant, p);
    }
    p.bytes.append(bytes, n);
    p.inst += inst;
    p.ent += ent;
    this.pendingBytes += n;
    if (this.pendingBytes >= HOLD_BYTES) this.post();
    else if (this.holding === undefined)
      this.holding = this.holdMs > 0 ? setTimeout(() => this.post(), this.holdMs) : setImmediate(() => this.post());
  }

  /** Sends what waits here (send), before any sync so that the sync follows its rows. */
  private post(): void {
    if (this.holding !== undefined) {
      if (this.holdMs > 0) clearTimeout(this.holding as NodeJS.Timeout);
      else clearImmediate(this.holding as NodeJS.Immediate);
    }
    this.holding = undefined;
    if (this.pending.size === 0) return;
    const b: FactBatch[] = [];
    for (const p of this.pending.values()) {
      // A copy of just its bytes: a view would be cloned with the whole buffer behind it.
      b.push({ tenant: p.tenant, facts: Uint8Array.prototype.slice.call(p.bytes.buf, 0, p.bytes.len), inst: p.inst, ent: p.ent });
      if (this.spare.length < MAX_SPARE) this.spare.push(p.bytes);
    }
    this.pending.clear();
    this.pendingBytes = 0;
    this.own.postMessage({ k: 'rows', b } satisfies ToWriter);
  }

  sync(): Promise<void> {
    this.post();
    const id = String(++this.next);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.syncs.delete(id);
        reject(new Error('the tsdb writer did not answer in time'));
      }, SYNC_MS);
      this.syncs.set(id, { resolve, reject, timer });
      this.own.postMessage({ k: 'sync', id } satisfies ToWriter);
    });
  }

  /**
   * Posts what waits here and closes once the writer answered bye (or after BYE_MS: a writer gone answers nothing),
   * so that the writer's own close, which comes by another port, counts these rows as sent or lost.
   */
  async close(): Promise<void> {
    this.post();
    this.full = false;
    for (const w of this.waiters.splice(0)) w();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, BYE_MS);
      this.bye = (): void => {
        clearTimeout(timer);
        resolve();
      };
      this.own.postMessage({ k: 'bye' } satisfies ToWriter);
    });
    this.main.close();
    this.own.close();
  }
}
