// Free TCP ports of 127.0.0.1 for tests that must name a port before something listens on it (a broker's policy API,
// a relay, a device): listened on by the kernel's choice, then closed.
import { createServer } from 'node:net';

/** n distinct free ports: held open together, so the same port is not handed out twice. */
export async function freePorts(n: number): Promise<number[]> {
  const servers = Array.from({ length: n }, () => createServer());
  const ports = await Promise.all(
    servers.map(
      (s) =>
        new Promise<number>((resolve, reject) => {
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve((s.address() as { port: number }).port));
        }),
    ),
  );
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/** One free port. */
export const freePort = async (): Promise<number> => (await freePorts(1))[0]!;
