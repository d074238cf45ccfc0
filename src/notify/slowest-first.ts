// Which endpoint loses a notification when the notification queue is over its byte budget (delivery.ts): the
// slowest of the endpoints with notifications waiting, found with a binary min-heap that is refreshed lazily.
//
// Slowest: the endpoint whose last 2xx answer is the oldest (one that never answered ranks first); among equals
// (endpoints that never answered), the one whose oldest waiting notification arrived first. A dead receiver never
// answers, so its rank stays where it died while a healthy receiver's rank moves on with every delivery: from its
// first answer on, a healthy endpoint ranks after every dead one, whatever either has queued. Ranking by the oldest
// waiting notification alone would not do that (a healthy receiver a little slower than the flood's turnover would
// lose to the dead ones), nor would ranking by bytes queued (it sacrifices the busiest healthy receiver).
//
// Both parts of the rank only grow while an endpoint is in the heap (answers are counted by a sequence, not a clock;
// the oldest waiting tag rises as items leave: lane.ts), so a stale entry ranks its endpoint too early, never too
// late: the top is re-ranked and sifted down until it is current, and then it is the true minimum.

export interface Ranked {
  /** The delivery's success count at this endpoint's last 2xx answer; 0: never answered. */
  lastSuccessSeq: number;
  /** Notifications waiting (not in flight). */
  waiting: number;
  /** Has an entry in the heap (perhaps with a stale rank): not added again. */
  inHeap: boolean;
}

interface Entry<E> {
  ep: E;
  success: number;
  tag: number;
}

export class SlowestFirst<E extends Ranked> {
  private heap: Entry<E>[] = [];

  constructor(private readonly oldestTag: (ep: E) => number) {}

  get size(): number {
    return this.heap.length;
  }

  /** ep has notifications waiting; live: how many endpoints have. */
  add(ep: E, live: number): void {
    if (ep.inHeap) return;
    ep.inHeap = true;
    this.heap.push({ ep, success: ep.lastSuccessSeq, tag: this.oldestTag(ep) });
    this.siftUp(this.heap.length - 1);
    // Entries of endpoints that emptied stay until they surface: rebuild before they outnumber the live ones.
    if (this.heap.length > 2 * live + 64) this.rebuild();
  }

  /** The slowest endpoint with notifications waiting; undefined when none has. */
  slowest(): E | undefined {
    while (this.heap.length > 0) {
      const top = this.heap[0]!;
      const ep = top.ep;
      if (ep.waiting === 0) {
        ep.inHeap = false;
        this.removeTop();
        continue;
      }
      const tag = this.oldestTag(ep);
      if (top.success === ep.lastSuccessSeq && top.tag === tag) return ep;
      top.success = ep.lastSuccessSeq;
      top.tag = tag;
      this.siftDown(0);
    }
    return undefined;
  }

  private rebuild(): void {
    const live: Entry<E>[] = [];
    for (const entry of this.heap) {
      if (entry.ep.waiting === 0) {
        entry.ep.inHeap = false;
        continue;
      }
      entry.success = entry.ep.lastSuccessSeq;
      entry.tag = this.oldestTag(entry.ep);
      live.push(entry);
    }
    this.heap = live;
    for (let i = (live.length >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  private removeTop(): void {
    const last = this.heap.pop()!;
    if (this.heap.length === 0) return;
    this.heap[0] = last;
    this.siftDown(0);
  }

  private siftUp(i: number): void {
    const h = this.heap;
    const entry = h[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(entry, h[parent]!)) break;
      h[i] = h[parent]!;
      i = parent;
    }
    h[i] = entry;
  }

  private siftDown(i: number): void {
    const h = this.heap;
    const entry = h[i]!;
    const n = h.length;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(h[child + 1]!, h[child]!)) child++;
      if (!before(h[child]!, entry)) break;
      h[i] = h[child]!;
      i = child;
    }
    h[i] = entry;
  }
}

function before(a: Entry<unknown>, b: Entry<unknown>): boolean {
  return a.success < b.success || (a.success === b.success && a.tag < b.tag);
}
