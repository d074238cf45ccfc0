// A context being resolved, shared by every request that needs it meanwhile (single flight), and how those requests
// hear that it waits for the network: the pipeline then lets them wait off the thread's capacity (issue 13).
import type { FlatContext } from './flat-context.js';

/**
 * A request resolving a @context, told when it has to wait for a remote document (the network, or a fetch of it
 * under way). `park` throws the request's refusal when it may not wait (too many wait already): its resolve then
 * rejects with that error while the fetch goes on for the others.
 */
export interface FetchWaiter {
  park(): void;
}

/** A context being built, shared by every resolve of its key meanwhile (single flight). */
export class SharedBuild {
  private promise!: Promise<FlatContext>;
  /** It waits for the network: whoever joins it now waits for the network too. */
  private remote = false;
  /** Requests that joined before it went to the network, with the rejection of their own wait. */
  private waiters: Array<{ waiter: FetchWaiter; reject: (e: unknown) => void }> = [];

  /** Sets the work; its failure reaches every request that awaits it, and is no unhandled rejection if none does. */
  start(promise: Promise<FlatContext>): void {
    this.promise = promise;
    promise.catch(() => undefined);
  }

  /** The build's result for one request, which is told when the build goes to the network (see FetchWaiter). */
  join(waiter: FetchWaiter | undefined): Promise<FlatContext> {
    if (waiter === undefined) return this.promise;
    if (this.remote) {
      try {
        waiter.park();
      } catch (e) {
        return Promise.reject(e);
      }
      return this.promise;
    }
    return new Promise((resolve, reject) => {
      this.waiters.push({ waiter, reject });
      this.promise.then(resolve, reject);
    });
  }

  /** The build awaits a remote document: every request waiting for it parks (or is refused). */
  goRemote(): void {
    if (this.remote) return;
    this.remote = true;
    for (const { waiter, reject } of this.waiters) {
      try {
        waiter.park();
      } catch (e) {
        reject(e);
      }
    }
    this.waiters = [];
  }
}
