// WebSocket clients for the transport's tests: `WsClient` (undici's WebSocket, a real client) sends requests in the
// message format of README "WebSocket" and matches answers by correlation id; `RawWs` speaks the protocol over a bare
// TCP socket, for what a well-behaved client never does (frames the protocol forbids, a client that stops reading).
import { WebSocket } from 'undici';
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';

export interface WsAnswer {
  metadata: { correlationId: string | null; status: number; headers: Record<string, string> };
  body?: any;
}

export interface WsRequestSpec {
  method: string;
  path: string;
  query?: string;
  headers?: Record<string, string>;
  body?: unknown;
}

export class WsClient {
  /** Messages that answer no request of this client (refusals without correlation id, notifications). */
  readonly others: any[] = [];
  closed: { code: number; reason: string } | undefined;
  /** The connection's identifier, from the broker's first message (`urn:ngsi-ld:WebSocket:<uuid>`). */
  connection: string | undefined;
  private readonly waiting = new Map<string, (a: WsAnswer) => void>();
  private next = 0;
  private readonly whenClosed: Promise<void>;

  private constructor(readonly ws: WebSocket) {
    ws.onmessage = (e) => {
      const m = JSON.parse(String(e.data)) as WsAnswer;
      const hello = (m.metadata as { connection?: string } | undefined)?.connection;
      if (hello !== undefined && this.connection === undefined) return void (this.connection = hello);
      const id = m.metadata?.correlationId;
      const w = typeof id === 'string' ? this.waiting.get(id) : undefined;
      if (w === undefined) return void this.others.push(m);
      this.waiting.delete(id!);
      w(m);
    };
    this.whenClosed = new Promise((resolve) => {
      ws.onclose = (e) => {
        this.closed = { code: e.code, reason: e.reason };
        resolve();
      };
    });
  }

  static async open(port: number, path = '/ngsi-ld/v1/ws'): Promise<WsClient> {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`);
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve();
      ws.onerror = () => reject(new Error('the WebSocket did not open'));
    });
    const client = new WsClient(ws);
    const deadline = Date.now() + 5000;
    while (client.connection === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    return client;
  }

  /** Sends a request with a fresh correlation id (or `id`) and resolves with its answer. */
  request(spec: WsRequestSpec, id = `c${++this.next}`): Promise<WsAnswer> {
    const answer = this.expect(id);
    const metadata: Record<string, unknown> = { method: spec.method, path: spec.path, correlationId: id };
    if (spec.query !== undefined) metadata.query = spec.query;
    if (spec.headers !== undefined) metadata.headers = spec.headers;
    this.ws.send(JSON.stringify(spec.body === undefined ? { metadata } : { metadata, body: spec.body }));
    return answer;
  }

  /** The answer to come with correlation id `id` (of a message sent by hand). */
  expect(id: string): Promise<WsAnswer> {
    return new Promise((resolve) => this.waiting.set(id, resolve));
  }

  /** Resolves once `n` messages without a pending correlation id have come. */
  async othersAtLeast(n: number, timeoutMs = 5000): Promise<any[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.others.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    return this.others;
  }

  send(data: string | Uint8Array): void {
    this.ws.send(data);
  }

  close(): Promise<void> {
    this.ws.close();
    return this.whenClosed;
  }

  wait(): Promise<void> {
    return this.whenClosed;
  }
}

/** A client frame (RFC 6455 §5.2), masked unless `masked` is false. */
export function frame(opcode: number, payload: Buffer, opts: { fin?: boolean; masked?: boolean; rsv?: number } = {}): Buffer {
  const fin = opts.fin ?? true;
  const masked = opts.masked ?? true;
  const head: number[] = [(fin ? 0x80 : 0) | ((opts.rsv ?? 0) << 4) | opcode];
  const maskBit = masked ? 0x80 : 0;
  const n = payload.length;
  if (n < 126) head.push(maskBit | n);
  else if (n < 65536) head.push(maskBit | 126, n >> 8, n & 0xff);
  else {
    head.push(maskBit | 127, 0, 0, 0, 0);
    head.push((n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
  }
  if (!masked) return Buffer.concat([Buffer.from(head), payload]);
  const key = randomBytes(4);
  const body = Buffer.alloc(n);
  for (let i = 0; i < n; i++) body[i] = payload[i]! ^ key[i & 3]!;
  return Buffer.concat([Buffer.from(head), key, body]);
}

export const textFrame = (text: string): Buffer => frame(1, Buffer.from(text));

/** A WebSocket over a bare socket: the handshake, then whatever bytes the test writes; reading can be paused. */
export class RawWs {
  received = 0;
  ended = false;
  private data = Buffer.alloc(0);
  private readonly whenEnded: Promise<void>;

  private constructor(readonly socket: Socket) {
    this.whenEnded = new Promise((resolve) => {
      socket.on('close', () => {
        this.ended = true;
        resolve();
      });
    });
    socket.on('error', () => undefined);
  }

  /** Opens a connection and completes the handshake; rejects with the server's answer when it does not upgrade. */
  static open(port: number, path = '/ngsi-ld/v1/ws'): Promise<RawWs> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let head = Buffer.alloc(0);
      const onData = (d: Buffer): void => {
        head = Buffer.concat([head, d]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        socket.off('data', onData);
        const text = head.subarray(0, end).toString('latin1');
        if (!text.startsWith('HTTP/1.1 101')) {
          socket.destroy();
          return reject(new Error(text.split('\r\n')[0]));
        }
        const raw = new RawWs(socket);
        raw.push(head.subarray(end + 4));
        socket.on('data', (more: Buffer) => raw.push(more));
        resolve(raw);
      };
      socket.on('data', onData);
      socket.on('error', reject);
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
  }

  private push(d: Buffer): void {
    this.received += d.length;
    this.data = Buffer.concat([this.data, d]);
  }

  /** Server frames received whole so far: opcode and payload (the server never masks, RFC 6455 §5.1). */
  frames(): Array<{ opcode: number; payload: Buffer }> {
    const out: Array<{ opcode: number; payload: Buffer }> = [];
    let at = 0;
    const d = this.data;
    while (at + 2 <= d.length) {
      let len = d[at + 1]! & 0x7f;
      let off = at + 2;
      if (len === 126) {
        if (off + 2 > d.length) break;
        len = d.readUInt16BE(off);
        off += 2;
      } else if (len === 127) {
        if (off + 8 > d.length) break;
        len = Number(d.readBigUInt64BE(off));
        off += 8;
      }
      if (off + len > d.length) break;
      out.push({ opcode: d[at]! & 0x0f, payload: d.subarray(off, off + len) });
      at = off + len;
    }
    return out;
  }

  /** The text messages received whole so far, parsed, but the broker's first (the connection's identifier). */
  messages(): any[] {
    return this.frames()
      .filter((f) => f.opcode === 1)
      .map((f) => JSON.parse(f.payload.toString()))
      .filter((m) => m.metadata?.connection === undefined);
  }

  /** The close frame's code, when the server sent one. */
  closeCode(): number | undefined {
    const close = this.frames().find((f) => f.opcode === 8);
    return close === undefined || close.payload.length < 2 ? undefined : close.payload.readUInt16BE(0);
  }

  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Resolves once the server closed the connection, or after `ms` (then `ended` stays false). */
  async ends(ms = 5000): Promise<boolean> {
    await Promise.race([this.whenEnded, new Promise((r) => setTimeout(r, ms))]);
    return this.ended;
  }

  destroy(): void {
    this.socket.destroy();
  }
}
