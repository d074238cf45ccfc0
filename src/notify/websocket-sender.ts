// Notifications whose endpoint is a WebSocket connection of this broker (`urn:ngsi-ld:WebSocket:<uuid>`, README
// "WebSocket"): the connection lives on the front thread, so the notifier hands each one over on a channel of the
// broker instance and the front writes it on the connection (front/ws/notifications.ts).
import { BroadcastChannel } from 'node:worker_threads';
import { channelName } from './channel.js';

export const WEBSOCKET_CHANNEL = 'ldbroker:websocket';

/** One notification for a connection: its endpoint, the notification's headers (flat) and its JSON text. */
export interface WebSocketNotification {
  uri: string;
  subscriptionId: string;
  headers: string[];
  body: string;
}

/**
 * The sender of the notifier thread. Delivery ends at the hand-over: a connection closed meanwhile drops it (its
 * subscriptions are being deleted), as an HTTP receiver gone away would.
 */
export function webSocketSender(instance: string | undefined): { send: (n: WebSocketNotification) => void; close: () => void } {
  const channel = new BroadcastChannel(channelName(WEBSOCKET_CHANNEL, instance));
  channel.unref();
  return { send: (n) => channel.postMessage(n), close: () => channel.close() };
}
