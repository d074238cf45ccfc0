// The notification receiver of a tuning run (seed 001 §4.4: "a test client that receives and counts
// notifications"): an HTTP endpoint on the loopback that answers every POST 204 at once and counts it.
import { createServer, type Server } from 'node:http';

export interface Receiver {
  readonly url: string;
  /** Notifications received since start (one POST each). */
  count(): number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  let received = 0;
  const server: Server = createServer((req, res) => {
    // The body is read to its end (a notification's size is the broker's cost, not ours to skip) and dropped.
    req.on('data', () => undefined);
    req.on('end', () => {
      if (req.method === 'POST') received++;
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/notify`,
    count: () => received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
