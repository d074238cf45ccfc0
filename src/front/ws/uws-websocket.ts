// The WebSocket route of the uWS front (README "WebSocket"): GET /ngsi-ld/v1/ws upgrades; the upgrade is not asked
// to the auth plugin (seed 000 §5.1 rule 2: a connection carries no credentials, each message carries its own).
import { randomUUID } from 'node:crypto';
import type { TemplatedApp, WebSocket } from '@trufflesuite/uws-js-unofficial';
import { WsConnection, type WsLimits } from './connection.js';
import type { Exchange } from '../exchange.js';
import type { Logger } from '../../logger.js';
import { MAX_HEAD_BYTES } from '../request-head.js';
import { WS_PATH } from './path.js';

export { WS_PATH } from './path.js';

export interface WsRoute {
  limits: WsLimits;
  run: (ex: Exchange) => Promise<void>;
  log: Logger;
  /** Called once a connection is open and once it is closed (subscriptions on it, ws/endpoint.ts). */
  opened?: (c: WsConnection) => void;
  closed?: (c: WsConnection) => void;
}

interface UserData {
  connection?: WsConnection;
}

export function addWebSocketRoute(app: TemplatedApp, route: WsRoute): void {
  app.ws<UserData>(WS_PATH, {
    // A message holds its metadata (a request head at most MAX_HEAD_BYTES) and its body (--maxBodySize), with room
    // for JSON quoting; uWS closes a connection whose message is larger (1009, RFC 6455 §7.4.1).
    maxPayloadLength: route.limits.maxBodySize + 2 * MAX_HEAD_BYTES,
    // connection.ts closes a connection past the bound itself (with a log line); this is uWS's own guard on it.
    maxBackpressure: route.limits.maxBackpressure,
    closeOnBackpressureLimit: 1,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade(res, req, context) {
      // uWS takes `req` back when this returns: the handshake's headers are read now. No subprotocol is offered.
      res.upgrade<UserData>({}, req.getHeader('sec-websocket-key'), '', req.getHeader('sec-websocket-extensions'), context);
    },
    open(ws: WebSocket<UserData>) {
      const connection = new WsConnection(
        `urn:ngsi-ld:WebSocket:${randomUUID()}`,
        {
          send: (bytes) => {
            ws.cork(() => ws.send(bytes, false));
          },
          bufferedAmount: () => ws.getBufferedAmount(),
          terminate: () => ws.close(),
        },
        route.limits,
        route.run,
        route.log,
      );
      ws.getUserData().connection = connection;
      route.opened?.(connection);
      connection.hello();
    },
    message(ws, message) {
      ws.getUserData().connection?.message(message);
    },
    drain(ws) {
      ws.getUserData().connection?.drain();
    },
    close(ws) {
      const connection = ws.getUserData().connection;
      if (connection === undefined) return;
      connection.closed();
      route.closed?.(connection);
    },
  });
}
