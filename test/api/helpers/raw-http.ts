// HTTP/1.1 over a bare TCP socket: requests fetch() would refuse to send (no Host, HTTP/1.0, malformed, CR LF in a
// value) and answers read byte for byte, so a header split in two or a body after a HEAD shows.
import { connect } from 'node:net';

export interface RawReply {
  status: number;
  /** The status line and header lines as received, CR LF kept. */
  head: string;
  /** Header fields in order, names lower-cased. */
  headers: Array<[string, string]>;
  body: Buffer;
}

export interface RawExchange {
  replies: RawReply[];
  /** The server closed the connection (FIN or reset) before the guard time. */
  closed: boolean;
  /** What arrived after the last whole reply. */
  rest: Buffer;
}

/**
 * Sends `request` and reads replies until `expect.length` replies are whole, the server closes, or `guardMs` passes.
 * A list of requests is sent on the one connection each once the answer before it is whole (uWS closes a connection
 * that pipelines a request while an answer is pending). `expect[i]` is true when reply i answers a HEAD (a head only,
 * whatever its Content-Length says): a body after it would be taken for the next reply's status line.
 */
export function rawExchange(
  port: number,
  request: string | Buffer | Array<string | Buffer>,
  expect: boolean[] = [false],
  guardMs = 5000,
): Promise<RawExchange> {
  const requests = Array.isArray(request) ? request : [request];
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    const replies: RawReply[] = [];
    let done = false;
    const finish = (closed: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(guard);
      socket.destroy();
      resolve({ replies, closed, rest: data });
    };
    const guard = setTimeout(() => finish(false), guardMs);
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      for (;;) {
        const end = data.indexOf('\r\n\r\n');
        if (end < 0) break;
        const head = data.subarray(0, end + 2).toString('latin1');
        const lines = head.split('\r\n').slice(0, -1);
        const headers = lines.slice(1).map((l): [string, string] => {
          const colon = l.indexOf(':');
          return [l.slice(0, colon).toLowerCase(), l.slice(colon + 1).trim()];
        });
        const status = Number(lines[0]!.split(' ')[1]);
        const length =
          expect[replies.length] === true || status === 204 || status === 304
            ? 0
            : Number(headers.find(([n]) => n === 'content-length')?.[1] ?? 0);
        if (data.length < end + 4 + length) break;
        replies.push({ status, head, headers, body: data.subarray(end + 4, end + 4 + length) });
        data = data.subarray(end + 4 + length);
        if (replies.length === expect.length) return finish(false);
        if (replies.length < requests.length) socket.write(requests[replies.length]!);
      }
    });
    socket.on('error', () => finish(true));
    socket.on('end', () => finish(true));
    socket.write(requests[0]!);
  });
}

export function header(reply: RawReply, name: string): string | undefined {
  return reply.headers.find(([n]) => n === name)?.[1];
}
