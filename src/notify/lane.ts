// One lane of an endpoint's delivery queue (src/notify/delivery.ts): first in, first out across order keys, and
// within one order key sorted by seq, so a notification that reaches the notifier after a later one of the same
// subscription and entity still goes out first as long as that later one has not been sent yet.
import type { DueNotification } from './channel.js';

/** Items of one order key still waiting: how many, and the greatest seq among them. */
interface KeyState {
  n: number;
  maxSeq: number;
}

export class Lane<E> {
  private items: (DueNotification | undefined)[] = [];
  private head = 0;
  private readonly keys = new Map<string, KeyState>();
  /** Sending, or about to start: enqueue must not start a second sender. */
  busy = false;

  constructor(readonly endpoint: E) {}

  get waiting(): number {
    return this.items.length - this.head;
  }

  push(due: DueNotification): void {
    const state = this.keys.get(due.orderKey);
    if (state === undefined) {
      this.keys.set(due.orderKey, { n: 1, maxSeq: due.seq });
      this.items.push(due);
      return;
    }
    state.n++;
    if (due.seq >= state.maxSeq) {
      state.maxSeq = due.seq;
      this.items.push(due);
      return;
    }
    // Out of order: before the first waiting item of its key with a greater seq.
    let j = this.head;
    while (j < this.items.length) {
      const it = this.items[j]!;
      if (it.orderKey === due.orderKey && it.seq > due.seq) break;
      j++;
    }
    this.items.splice(j, 0, due);
  }

  shift(): DueNotification | undefined {
    if (this.head >= this.items.length) return undefined;
    const due = this.items[this.head]!;
    this.items[this.head++] = undefined;
    const state = this.keys.get(due.orderKey)!;
    if (--state.n === 0) this.keys.delete(due.orderKey);
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return due;
  }
}
