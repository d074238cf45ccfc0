// The two HTTP servers the front can run on: uWebSockets.js (the fast path) and node:http (fallback).
import type { Exchange } from './exchange.js';

export type RequestHandler = (ex: Exchange) => void;

export interface HttpServer {
  readonly kind: 'uws' | 'node';
  /** Resolves with the port actually bound (useful with port 0). */
  listen(host: string, port: number): Promise<number>;
  /** Stops accepting connections; requests in flight go on. */
  close(): void;
  /** Closes every connection. */
  closeAll(): void;
}
