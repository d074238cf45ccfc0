// A TCP relay the tests put between a broker and a server (QuestDB) to take that server away and bring it back
// without touching it: closed, the port refuses connections and every relayed one is cut; open, it relays again.
import { createServer, connect, type Server, type Socket } from 'node:net';

export class TcpGate {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly port: number,
    private readonly target: number,
  ) {}

  /** A gate on a free port of 127.0.0.1 towards `target`; closed until open() is called. */
  static async reserve(target: number): Promise<TcpGate> {
    const probe = createServer();
    await new Promise<void>((res) => probe.listen(0, '127.0.0.1', res));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((res) => probe.close(() => res()));
    return new TcpGate(port, target);
  }

  async open(): Promise<void> {
    if (this.server !== undefined) return;
    const server = createServer((client) => {
      const upstream = connect(this.target, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((res) => server.listen(this.port, '127.0.0.1', res));
    this.server = server;
  }

  /** Refuses new connections and cuts the open ones, as a server that went down. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (server !== undefined) await new Promise<void>((res) => server.close(() => res()));
  }
}
