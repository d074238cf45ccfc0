// Entity writes through the store with their events: once the store committed a write, its events (store/contract.ts
// WriteEvent: before, after, what changed, sequence) go to the thread's change sink (subscriptions match there;
// ARCHITECTURE.md step 11).
import type { BatchItem, BatchOutcome, MutateOptions, Mutation, WriteEvent } from '../store/contract.js';
import type { WorkerContext } from '../pipeline/worker-context.js';

/** Where committed writes go; absent when nothing listens (no subscriptions, no bridges). */
export interface ChangeSink {
  publish(events: readonly WriteEvent[]): void;
}

/** One entity write (Store.mutateEntity), its event published once committed. */
export async function writeEntity<R>(ctx: WorkerContext, tenant: string, id: string, mutation: Mutation<R>, opts?: MutateOptions): Promise<R> {
  const sink = ctx.changes;
  if (sink === undefined) return ctx.store.mutateEntity(tenant, id, mutation, opts);
  const events: WriteEvent[] = [];
  const result = await ctx.store.mutateEntity(tenant, id, mutation, { ...opts, events });
  if (events.length > 0) sink.publish(events);
  return result;
}

/** Entity writes in one transaction (Store.mutateEntities), the events of the committed ones published. */
export async function writeEntities<R>(ctx: WorkerContext, tenant: string, items: readonly BatchItem<R>[], opts?: MutateOptions): Promise<BatchOutcome<R>[]> {
  const sink = ctx.changes;
  if (sink === undefined) return ctx.store.mutateEntities(tenant, items, opts);
  const events: WriteEvent[] = [];
  const outcomes = await ctx.store.mutateEntities(tenant, items, { ...opts, events });
  if (events.length > 0) sink.publish(events);
  return outcomes;
}
