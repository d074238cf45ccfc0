// The front's side of notifications to WebSocket connections (README "WebSocket"): the notifier thread hands them over
// on the broker's channel (notify/websocket-sender.ts); each is written on its connection as a message without
// correlation id, {metadata: {subscriptionId, headers}, body: Notification}. When a connection closes, the broker's
// own request deletes the subscriptions it made (seed 000 §5.1 rule 3: not asked to the auth plugin).
import { LdOp } from '../../ngsild/operations.js';
import type { PipelineRunner } from '../../pipeline/runner.js';
import type { Logger } from '../../logger.js';
import type { WsConnection } from './connection.js';

const encoder = new TextEncoder();

/** A notification as the notifier hands it over (notify/websocket-sender.ts, wired in broker.ts). */
export interface WebSocketNotification {
  uri: string;
  subscriptionId: string;
  headers: string[];
  body: string;
}

/** Where the notifier's hand-overs are heard: calls `deliver` with each; the function returned stops listening. */
export type NotificationSource = (deliver: (n: WebSocketNotification) => void) => () => void;

export function encodeNotification(n: WebSocketNotification): Uint8Array {
  const headers: Record<string, string> = {};
  for (let i = 0; i < n.headers.length; i += 2) headers[n.headers[i]!] = n.headers[i + 1]!;
  const meta = JSON.stringify({ subscriptionId: n.subscriptionId, headers });
  // The body is the notifier's JSON text: spliced in, not parsed again.
  return encoder.encode(`{"metadata":${meta},"body":${n.body}}`);
}

export class WsNotifications {
  private readonly connections = new Map<string, WsConnection>();
  private readonly stop: () => void;
  /** Deletions of closed connections' subscriptions not answered yet. */
  private readonly deleting = new Set<Promise<unknown>>();

  constructor(
    source: NotificationSource,
    private readonly runner: PipelineRunner,
    private readonly log: Logger,
  ) {
    // A connection closed meanwhile: dropped, its subscriptions are being deleted.
    this.stop = source((n) => this.connections.get(n.uri)?.send(encodeNotification(n)));
  }

  opened(c: WsConnection): void {
    this.connections.set(c.id, c);
  }

  /** Deletes the subscriptions of `c` in each tenant it made subscription requests in. */
  closed(c: WsConnection): void {
    this.connections.delete(c.id);
    for (const tenant of c.subscriptionTenants) {
      const deletion = this.runner
        .run({
          op: LdOp.DeleteConnectionSubscriptions,
          route: '',
          method: 'DELETE',
          path: '',
          query: '',
          params: [],
          headers: { tenant: tenant === '' ? undefined : tenant },
          body: null,
          connection: c.id,
          internal: true,
        })
        .then(
          (r) => {
            if (r.status >= 400 && r.status !== 404)
              this.log.warn({ connection: c.id, status: r.status }, 'subscriptions of a closed websocket not deleted');
          },
          (err: unknown) => this.log.warn({ err, connection: c.id }, 'subscriptions of a closed websocket not deleted'),
        );
      this.deleting.add(deletion);
      void deletion.finally(() => this.deleting.delete(deletion));
    }
  }

  connectionCount(): number {
    return this.connections.size;
  }

  /** Resolves once the deletions asked so far are done. */
  async settled(): Promise<void> {
    while (this.deleting.size > 0) await Promise.all([...this.deleting]);
  }

  close(): void {
    this.stop();
  }
}
