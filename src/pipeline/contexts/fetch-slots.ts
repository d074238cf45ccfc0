// Bounds the remote @context fetches a thread runs at once, per host and in all (issue 13): the rest wait in arrival
// order, each until its own deadline, so a client naming many slow URLs cannot open connections without limit.

/** How a wait for a slot ended. */
export type SlotGrant = 'granted' | 'expired' | 'queueFull';

interface Queued {
  host: string;
  signal: AbortSignal;
  settle: (grant: SlotGrant) => void;
  onAbort: () => void;
}

export class FetchSlots {
  private running = 0;
  private readonly runningByHost = new Map<string, number>();
  private readonly queue: Queued[] = [];

  constructor(
    readonly perHost: number,
    readonly total: number,
    readonly maxQueued: number,
  ) {}

  /**
   * A slot for a fetch from `host`: 'granted' (then call release(host) once done), 'expired' when `signal` aborted
   * while it waited, 'queueFull' when too many fetches wait already.
   */
  acquire(host: string, signal: AbortSignal): Promise<SlotGrant> {
    if (signal.aborted) return Promise.resolve('expired');
    // Whatever waits has no room (release hands slots on at once), so a fetch with room passes it by.
    if (this.hasRoom(host)) {
      this.take(host);
      return Promise.resolve('granted');
    }
    if (this.queue.length >= this.maxQueued) return Promise.resolve('queueFull');
    return new Promise<SlotGrant>((settle) => {
      const entry: Queued = {
        host,
        signal,
        settle,
        onAbort: () => {
          const i = this.queue.indexOf(entry);
          if (i >= 0) this.queue.splice(i, 1);
          settle('expired');
        },
      };
      signal.addEventListener('abort', entry.onAbort, { once: true });
      this.queue.push(entry);
    });
  }

  /** Gives back a granted slot and hands it on to the first waiting fetch it may serve. */
  release(host: string): void {
    this.running--;
    const n = this.runningByHost.get(host)! - 1;
    if (n === 0) this.runningByHost.delete(host);
    else this.runningByHost.set(host, n);
    // Arrival order, skipping fetches whose host is at its bound: one busy host holds back no other.
    for (let i = 0; i < this.queue.length && this.running < this.total;) {
      const next = this.queue[i]!;
      if (!this.hasRoom(next.host)) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      next.signal.removeEventListener('abort', next.onAbort);
      this.take(next.host);
      next.settle('granted');
    }
  }

  /** Fetches running and waiting, for tests and logs. */
  counts(): { running: number; queued: number } {
    return { running: this.running, queued: this.queue.length };
  }

  private hasRoom(host: string): boolean {
    return this.running < this.total && (this.runningByHost.get(host) ?? 0) < this.perHost;
  }

  private take(host: string): void {
    this.running++;
    this.runningByHost.set(host, (this.runningByHost.get(host) ?? 0) + 1);
  }
}
