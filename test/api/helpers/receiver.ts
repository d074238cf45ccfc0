// A notification receiver for tests: a real HTTP server on 127.0.0.1 that keeps every notification by path.
import { createServer, type Server } from 'node:http';

export interface Notification {
  path: string;
  body: any;
}

export interface Receiver {
  url: string;
  received: Notification[];
  /** The notifications of `path`, waiting (bounded, 10 s) until there are at least `n`. */
  at(path: string, n: number): Promise<Notification[]>;
  /** The entity ids of every notification of `path`, in arrival order. */
  idsAt(path: string): string[];
  close(): void;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Notification[] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (d) => {
      text += String(d);
    });
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: JSON.parse(text) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    received,
    async at(path, n) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const got = received.filter((r) => r.path === path);
        if (got.length >= n || Date.now() > deadline) return got;
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    idsAt(path) {
      return received.filter((r) => r.path === path).flatMap((r) => (r.body.data as Array<{ id: string }>).map((e) => e.id));
    },
    close() {
      server.close();
      server.closeAllConnections();
    },
  };
}
