// Outbound (seed 001 §1, §4.2): in each pipeline thread, the committed writes of an attribute a Channel binds go to
// the bridge host, which publishes them; whatever route wrote it (PATCH, PUT, batch, merge, upsert). Beside the
// subscriptions' sink (WorkerContext.bridges). A temporal append writes history only and is not seen here. Each write
// carries the store's sequence: this thread posts after its own commit, so another thread's later write can reach
// the host first, and the host orders them by it (write-order.ts).
import { BroadcastChannel } from 'node:worker_threads';
import type { ChangeSink } from '../pipeline/change-sink.js';
import type { WriteEvent } from '../store/contract.js';
import type { AttrInstance } from '../ngsild/entity/model.js';
import type { ConfiguredChannel } from './contract.js';
import { BRIDGE_OUT_CHANNEL, bridgeChannelName, type OutboundWrite } from './wire.js';

interface Binding {
  bridge: string;
  endpoint: string;
  attrIri: string;
}

export class BridgeSink implements ChangeSink {
  /** Entity id → its bound attributes (default tenant: the configuration names no tenant). */
  private readonly bound = new Map<string, Binding[]>();
  private readonly channel: BroadcastChannel;

  constructor(channels: readonly ConfiguredChannel[], expand: (term: string) => string, instance: string | undefined) {
    for (const c of channels) {
      const list = this.bound.get(c.entityId) ?? [];
      list.push({ bridge: c.bridge, endpoint: c.endpoint, attrIri: expand(c.attribute) });
      this.bound.set(c.entityId, list);
    }
    this.channel = new BroadcastChannel(bridgeChannelName(BRIDGE_OUT_CHANNEL, instance));
    this.channel.unref();
  }

  publish(events: readonly WriteEvent[]): void {
    let writes: OutboundWrite[] | undefined;
    for (const e of events) {
      if (e.tenant !== '' || e.after === undefined) continue;
      const bindings = this.bound.get(e.id);
      if (bindings === undefined) continue;
      for (const b of bindings) {
        // The default instance written by this write: a datasetId instance is not the Channel's value.
        if (e.change.written[b.attrIri]?.includes('@none') !== true) continue;
        const inst = (e.after[b.attrIri] as AttrInstance[] | undefined)?.find((i) => i.datasetId === undefined);
        if (inst === undefined) continue;
        (writes ??= []).push({ bridge: b.bridge, endpoint: b.endpoint, value: valueOf(inst), seq: e.seq });
      }
    }
    if (writes !== undefined) this.channel.postMessage({ writes });
  }

  close(): void {
    this.channel.close();
  }
}

/** The value member of an attribute, whatever its kind. */
function valueOf(inst: AttrInstance): unknown {
  const i = inst as unknown as Record<string, unknown>;
  return i.value ?? i.object ?? i.languageMap ?? i.vocab ?? i.json ?? i.valueList ?? i.objectList ?? null;
}
