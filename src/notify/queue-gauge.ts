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

export function readGauge(g: Float64Array): NotificationQueueStats {
  return {
    bytes: g[GAUGE.bytes]!,
    items: g[GAUGE.items]!,
    budgetBytes: g[GAUGE.budgetBytes]!,
    inFlight: g[GAUGE.inFlight]!,
    endpointsQueued: g[GAUGE.endpointsQueued]!,
    endpoints: g[GAUGE.endpoints]!,
    dropped: g[GAUGE.dropped]!,
  };
}
