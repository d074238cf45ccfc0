// What the front and the pipeline threads tell each other about a request handed to the pool, without a message:
// the front marks a request cancelled (its client went away, or --requestTimeout passed) and a thread marks one
// started, in one SharedArrayBuffer. A thread skips a cancelled request it has not started; one it started runs to
// its end (a write is applied whole or not at all), and its late answer is dropped by the front.
/** Cells per request slot: the id cancelled there, the id started there, the thread that started it. */
const CELLS = 3;
/** Cell 0 counts the requests the threads skipped (read by /metrics). */
const SKIPPED = 0;

/**
 * Slots for `maxPending` requests: a power of two, four times as many as the broker holds, so the id of a request
 * still queued on a thread is rarely overwritten by a later one's. An overwritten cancel only lets that request
 * run (as it did before there were cancels); a slot never makes a thread skip a request that was not cancelled.
 */
export function requestFlagSlots(maxPending: number): number {
  let slots = 1024;
  while (slots < maxPending * 4 && slots < 1 << 18) slots *= 2;
  return slots;
}

export class RequestFlags {
  private readonly cells: Int32Array;
  private readonly mask: number;

  constructor(readonly buffer: SharedArrayBuffer) {
    this.cells = new Int32Array(buffer);
    this.mask = (this.cells.length - 1) / CELLS - 1;
  }

  static create(slots: number): RequestFlags {
    return new RequestFlags(new SharedArrayBuffer((1 + slots * CELLS) * 4));
  }

  /**
   * The front: `id` will not be answered. Returns the thread that started it, or 0 when none has: then none will.
   * Each side writes its own mark before it reads the other's (sequentially consistent Atomics), so at least one
   * sees the other's: a request is never started without the front knowing it may have been.
   */
  cancel(id: number): number {
    const at = 1 + (id & this.mask) * CELLS;
    Atomics.store(this.cells, at, id);
    return Atomics.load(this.cells, at + 1) === id ? Atomics.load(this.cells, at + 2) : 0;
  }

  /** A pipeline thread, before it runs `id`: false when the front cancelled it (the thread skips it, counted). */
  start(id: number, thread: number): boolean {
    const at = 1 + (id & this.mask) * CELLS;
    Atomics.store(this.cells, at + 2, thread);
    Atomics.store(this.cells, at + 1, id);
    if (Atomics.load(this.cells, at) !== id) return true;
    Atomics.add(this.cells, SKIPPED, 1);
    return false;
  }

  /** Requests the threads skipped since start. */
  skipped(): number {
    return Atomics.load(this.cells, SKIPPED);
  }
}
