// Notifications per endpoint host for /metrics (README "Metrics"): sent, failed and queued, kept by delivery on the
// notifier thread. The label is the endpoint URL's host as URL parsing gives it (host and port, never path, query or
// user info); a client creating subscriptions to random hosts fills at most HOST_LABELS of them, then `<other>`,
// which no URL host can be.

/** Distinct hosts counted on their own; the later ones share OTHER_HOST. */
export const HOST_LABELS = 1000;
export const OTHER_HOST = '<other>';

export interface HostCount {
  host: string;
  /** Requests that went out (CIM 009 §5.2.14 timesSent's sense). */
  sent: number;
  /** Failures: answered with an error, no answer, or never sent (dropped by a queue limit). */
  failed: number;
  /** Waiting and in flight now. */
  queued: number;
}

/** One row per host: [host, sent, failed, queued]. */
export type HostRow = [string, number, number, number];

export class HostCounts {
  private readonly hosts = new Map<string, HostCount>();
  private readonly other: HostCount = { host: OTHER_HOST, sent: 0, failed: 0, queued: 0 };

  constructor(private readonly cap = HOST_LABELS) {}

  /** The counts of an endpoint's host, looked up once per endpoint (delivery keeps the object). */
  of(url: URL): HostCount {
    // A WebSocket connection of the front (urn:) has no host: its scheme names it.
    const host = url.host !== '' ? url.host : url.protocol.slice(0, -1);
    // RFC 1035 §2.3.4: a name is at most 255 octets; a longer opaque host (mqtt:, urn:) is no one's name to show.
    if (host.length > 255) return this.other;
    let c = this.hosts.get(host);
    if (c !== undefined) return c;
    if (this.hosts.size >= this.cap) return this.other;
    c = { host, sent: 0, failed: 0, queued: 0 };
    this.hosts.set(host, c);
    return c;
  }

  /** A failure of a notification whose endpoint URI does not parse: counted with `other`. */
  unparsed(): HostCount {
    return this.other;
  }

  rows(): HostRow[] {
    const out: HostRow[] = [];
    for (const c of this.hosts.values()) out.push([c.host, c.sent, c.failed, c.queued]);
    const o = this.other;
    if (o.sent + o.failed + o.queued > 0) out.push([o.host, o.sent, o.failed, o.queued]);
    return out;
  }
}
