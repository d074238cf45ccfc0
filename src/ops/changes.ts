// Entity writes through the store with their events: once the store committed a write, its events (store/contract.ts
// WriteEvent: before, after, what changed, sequence) go to the thread's change sink (subscriptions match there;
// ARCHITECTURE.md step 11), to the bridges' sink (writes of attributes Channels bind) and to a history beside the
// store (history/contract.ts record).
import type { BatchItem, BatchOutcome, MutateOptions, Mutation, WriteEvent } from '../store/contract.js';
import type { WorkerContext } from '../pipeline/worker-context.js';

/**
 * Does anything consume this thread's write events of the tenant? Most tenants have no subscription: their writes
 * skip building events (the change between the states, issue 24) unless a history or a bridge takes them. The
 * subscriptions are those the thread knows as the write starts, caught up with every change announced before
 * (ChangeSink.wants), as a request already waits for at its start (caughtUp).
 */
const listened = (ctx: WorkerContext, tenant: string): boolean =>
  (ctx.changes !== undefined && ctx.changes.wants?.(tenant) !== false) || ctx.history?.record !== undefined || ctx.bridges !== undefined;

/** One entity write (Store.mutateEntity), its event published once committed. */
export async function writeEntity<R>(
  ctx: WorkerContext,
  tenant: string,
  id: string,
  mutation: Mutation<R>,
  opts?: MutateOptions,
): Promise<R> {
  if (!listened(ctx, tenant)) return ctx.store.mutateEntity(tenant, id, mutation, opts);
  const events: WriteEvent[] = [];
  const result = await ctx.store.mutateEntity(tenant, id, mutation, { ...opts, events });
  if (events.length > 0) {
    ctx.changes?.publish(events);
    ctx.bridges?.publish(events);
    if (ctx.history?.record !== undefined) {
      const queued = record(ctx, tenant, events);
      if (queued !== undefined) await queued;
    }
  }
  return result;
}

/** Entity writes in one transaction (Store.mutateEntities), the events of the committed ones published. */
export async function writeEntities<R>(
  ctx: WorkerContext,
  tenant: string,
  items: readonly BatchItem<R>[],
  opts?: MutateOptions,
): Promise<BatchOutcome<R>[]> {
  if (!listened(ctx, tenant)) return ctx.store.mutateEntities(tenant, items, opts);
  const events: WriteEvent[] = [];
  const outcomes = await ctx.store.mutateEntities(tenant, items, { ...opts, events });
  if (events.length > 0) {
    ctx.changes?.publish(events);
    ctx.bridges?.publish(events);
    if (ctx.history?.record !== undefined) {
      const queued = record(ctx, tenant, events);
      if (queued !== undefined) await queued;
    }
  }
  return outcomes;
}

/**
 * Committed writes to a history beside the store, which the answer waits for so that a temporal read after it sees
 * them: undefined when the history queued them at once (history/contract.ts record). The write stands whatever the
 * history does: its failure is logged.
 */
function record(ctx: WorkerContext, tenant: string, events: WriteEvent[]): Promise<void> | undefined {
  const history = ctx.history!;
  const lost = (err: unknown): void => {
    ctx.log.error({ err, history: history.name, tenant, entities: events.length }, 'the history beside the store lost a committed write');
  };
  try {
    return history.record!(tenant, events)?.catch(lost);
  } catch (err) {
    lost(err);
    return undefined;
  }
}
