// When each Channel is polled next (seed 001 §2.4 `poll`): Channels of one poll period wait in one FIFO, in the order
// their polls fall due, so the next poll is the earliest head of a few queues (one per distinct period), not a scan of
// every Channel. Taken at `now`, a Channel is due again one period after its last due time, or now when it is late
// (a device slower than the polls is polled round robin, each Channel in turn).

export interface Polled {
  /** ms since the epoch. */
  due: number;
  pollMs: number;
}

export class PollSchedule<T extends Polled> {
  /** One queue per period: heads[i] indexes the first item of queues[i] (a ring would not shrink; this one compacts). */
  private readonly queues = new Map<number, { items: T[]; head: number }>();

  add(item: T): void {
    let q = this.queues.get(item.pollMs);
    if (q === undefined) {
      q = { items: [], head: 0 };
      this.queues.set(item.pollMs, q);
    }
    q.items.push(item);
  }

  /** The item due first. */
  peek(): T | undefined {
    let first: T | undefined;
    for (const q of this.queues.values()) {
      const head = q.items[q.head];
      if (head !== undefined && (first === undefined || head.due < first.due)) first = head;
    }
    return first;
  }

  /** Takes the item due first and puts it back at the end of its queue, due one period later. */
  take(now: number): T | undefined {
    const item = this.peek();
    if (item === undefined) return undefined;
    const q = this.queues.get(item.pollMs)!;
    q.head++;
    if (q.head > 1024 && q.head * 2 > q.items.length) {
      q.items.splice(0, q.head);
      q.head = 0;
    }
    item.due = Math.max(item.due + item.pollMs, now);
    q.items.push(item);
    return item;
  }
}
