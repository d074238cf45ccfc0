// The notification queue's numbers for /health: the notifier thread writes them into a SharedArrayBuffer as they
// change and the main thread reads them when asked, so /health never waits on the notifier's event loop.

/** Slots of the gauge (a Float64Array: counts stay exact far past any queue's size). */
export const GAUGE = {
  /** Bytes of the notifications waiting, as counted against the budget. */
  bytes: 0,
  /** Notifications waiting (not in flight). */
  items: 1,
  /** Requests sent and not yet answered. */
  inFlight: 2,
  /** Endpoints with notifications waiting. */
  endpointsQueued: 3,
  /** Notifications dropped by the queue limits since start. */
  dropped: 4,
  budgetBytes: 5,
  /** Endpoint structures held: those with notifications waiting or in flight, and idle ones until the sweep. */
  endpoints: 6,
} as const;

const SLOTS = 7;

export interface NotificationQueueStats {
  bytes: number;
  items: number;
  budgetBytes: number;
  inFlight: number;
  endpointsQueued: number;
  endpoints: number;
  dropped: number;
}

/** A gauge the main thread can share with the notifier thread (workerData carries the buffer). */
export function sharedGauge(): SharedArrayBuffer {
  return new SharedArrayBuffer(SLOTS * Float64Array.BYTES_PER_ELEMENT);
}

export function gaugeOf(buffer?: SharedArrayBuffer): Float64Array {
  return buffer === undefined ? new Float64Array(SLOTS) : new Float64Array(buffer);
}

/**
 * The slots are read while the notifier thread writes them. A notification only moves from waiting (items) to in
 * flight or to dropped, never back: reading where it goes before where it comes from (dropped, then inFlight, then
 * items) never counts one twice, so items + inFlight + dropped is never above the true total (it was, by one, when
 * a notification moved between two of the reads).
 */
export function readGauge(g: Float64Array): NotificationQueueStats {
  const dropped = g[GAUGE.dropped]!;
  const inFlight = g[GAUGE.inFlight]!;
  const items = g[GAUGE.items]!;
  return {
    bytes: g[GAUGE.bytes]!,
    items,
    budgetBytes: g[GAUGE.budgetBytes]!,
    inFlight,
    endpointsQueued: g[GAUGE.endpointsQueued]!,
    endpoints: g[GAUGE.endpoints]!,
    dropped,
  };
}
