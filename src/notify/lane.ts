// One lane of an endpoint's delivery queue (src/notify/delivery.ts): first in, first out across order keys, and
// within one order key sorted by seq, so a notification that reaches the notifier after a later one of the same
// subscription and entity still goes out first as long as that later one has not been sent yet.
import type { DueNotification } from './channel.js';

/** A notification waiting in a lane, with what the queue budget needs to know about it. */
export interface Waiting {
  due: DueNotification;
  /** What it counts against the queue budget (queue-budget.ts notificationBytes). */
  bytes: number;
  /**
   * Its age rank: the delivery's enqueue counter when it arrived. Tags never decrease from head to tail of a lane
   * (an item sorted in ahead of others takes the tag of the one it precedes), so the head is the lane's oldest.
   */
  tag: number;
}

/** Items of one order key still waiting: how many, and the greatest seq among them. */
interface KeyState {
  n: number;
  maxSeq: number;
}

export class Lane<E> {
  private items: (Waiting | undefined)[] = [];
  private head = 0;
  private readonly keys = new Map<string, KeyState>();
  /** Sending, or about to start: enqueue must not start a second sender. */
  busy = false;
  /** The notification being sent and how to end its request early (when its subscription is deleted). */
  sending: Waiting | undefined = undefined;
  abort: ((reason: string) => void) | undefined = undefined;
  /** Set when the notification being sent is to end before its request starts (its subscription deleted). */
  ended: string | undefined = undefined;

  constructor(readonly endpoint: E) {}

  get waiting(): number {
    return this.items.length - this.head;
  }

  /** The tag of the item that goes out next; Infinity when none waits. */
  get headTag(): number {
    return this.head < this.items.length ? this.items[this.head]!.tag : Infinity;
  }

  push(item: Waiting): void {
    const due = item.due;
    const state = this.keys.get(due.orderKey);
    if (state === undefined) {
      this.keys.set(due.orderKey, { n: 1, maxSeq: due.seq });
      this.items.push(item);
      return;
    }
    state.n++;
    if (due.seq >= state.maxSeq) {
      state.maxSeq = due.seq;
      this.items.push(item);
      return;
    }
    // Out of order: before the first waiting item of its key with a greater seq.
    let j = this.head;
    while (j < this.items.length) {
      const it = this.items[j]!;
      if (it.due.orderKey === due.orderKey && it.due.seq > due.seq) break;
      j++;
    }
    if (j === this.items.length) {
      // Its later items were taken out (removeWhere): it is the last of its key now.
      state.maxSeq = due.seq;
      this.items.push(item);
      return;
    }
    item.tag = this.items[j]!.tag;
    this.items.splice(j, 0, item);
  }

  shift(): Waiting | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head]!;
    this.items[this.head++] = undefined;
    const state = this.keys.get(item.due.orderKey)!;
    if (--state.n === 0) this.keys.delete(item.due.orderKey);
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Takes out every waiting item `drop` selects (a deleted subscription's), keeping the others in their order. */
  removeWhere(drop: (item: Waiting) => boolean): Waiting[] {
    const removed: Waiting[] = [];
    const kept: Waiting[] = [];
    for (let j = this.head; j < this.items.length; j++) {
      const item = this.items[j]!;
      if (!drop(item)) {
        kept.push(item);
        continue;
      }
      removed.push(item);
      const state = this.keys.get(item.due.orderKey)!;
      if (--state.n === 0) this.keys.delete(item.due.orderKey);
    }
    if (removed.length > 0) {
      this.items = kept;
      this.head = 0;
    }
    return removed;
  }
}
