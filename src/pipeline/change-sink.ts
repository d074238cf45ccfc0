// Where the pipeline hands committed writes: the thread's change sink (subscriptions match there,
// src/notify/subscription-sink.ts; ARCHITECTURE.md step 11). A write event (store/contract.ts WriteEvent) carries
// the entity before and after, what the write changed and the store's sequence.
import type { WriteEvent } from '../store/contract.js';

/** Where committed writes go; absent when nothing listens (no subscriptions, no bridges). */
export interface ChangeSink {
  publish(events: readonly WriteEvent[]): void;
  /** What to wait for before a request runs so that its writes are matched as they should be; undefined: nothing. */
  caughtUp?(): Promise<void> | undefined;
  /**
   * False when nothing would come of a write of this tenant now (no subscription of the tenant in the caught-up
   * index): the write then builds no events for this sink (ops/changes.ts, issue 24). Absent: always wanted.
   */
  wants?(tenant: string): boolean;
}
