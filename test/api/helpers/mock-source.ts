// A plain HTTP context source for the distributed-operation tests: answers each request with what `answer` returns
// for it (or never, for a source that hangs) and records what it was sent (method, URL, headers, body).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface MockAnswer {
  status: number;
  body?: unknown;
  /** A body written as it is (not JSON-encoded). */
  raw?: string;
  /** Never answer: the request hangs until the source stops. */
  hang?: boolean;
}

export interface MockSource {
  url: string;
  received: Received[];
  stop(): Promise<void>;
}

export async function startMockSource(answer: (r: Received) => MockAnswer): Promise<MockSource> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(r);
      const a = answer(r);
      if (a.hang === true) return;
      const text = a.raw ?? (a.body === undefined ? '' : JSON.stringify(a.body));
      res.writeHead(a.status, { 'content-type': 'application/json' });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
