// The request body on uWS, read through onData and bounded by --maxBodySize: one reader for the NGSI-LD front and
// the policy API, so both refuse a large body the same way and neither waits forever for a client that went away.
import { ClientGone } from './exchange.js';

type HttpResponse = import('@trufflesuite/uws-js-unofficial').HttpResponse;

export interface BodyReading {
  /** The body, or null when the request has none (no Content-Length and not chunked, or empty). */
  body: Promise<Uint8Array | null>;
  /** Call from the response's onAborted (uWS keeps one handler per response, so its owner calls this). */
  abort(): void;
}

const NO_BODY: BodyReading = { body: Promise.resolve(null), abort: () => undefined };

/**
 * Starts reading: a Content-Length above `max` is refused before anything is read, a body that grows past it while
 * streaming as soon as it does. `tooLarge` makes each caller's own error (ProblemDetails differ per port).
 */
export function readUwsBody(
  res: HttpResponse,
  contentLength: string | undefined,
  chunked: boolean,
  max: number,
  tooLarge: (max: number) => Error,
): BodyReading {
  if ((contentLength === undefined || contentLength === '') && !chunked) return NO_BODY;
  const declared = contentLength === undefined || contentLength === '' ? -1 : Number(contentLength);
  if (declared === 0) return NO_BODY;
  if (declared > max) return { body: Promise.reject(tooLarge(max)), abort: () => undefined };
  let abort: () => void = () => undefined;
  const body = new Promise<Uint8Array | null>((resolve, reject) => {
    let settled = false;
    abort = () => {
      if (settled) return;
      settled = true;
      reject(new ClientGone());
    };
    let buffer = new Uint8Array(declared > 0 ? declared : 4096);
    let length = 0;
    res.onData((chunk, isLast) => {
      if (settled) return;
      const bytes = new Uint8Array(chunk);
      if (length + bytes.byteLength > max) {
        settled = true;
        reject(tooLarge(max));
        return;
      }
      if (length + bytes.byteLength > buffer.byteLength) {
        const grown = new Uint8Array(Math.min(max, Math.max(buffer.byteLength * 2, length + bytes.byteLength)));
        grown.set(buffer.subarray(0, length));
        buffer = grown;
      }
      // uWS reuses the chunk's memory after the callback returns: copy now.
      buffer.set(bytes, length);
      length += bytes.byteLength;
      if (isLast) {
        settled = true;
        resolve(length === 0 ? null : buffer.subarray(0, length));
      }
    });
  });
  // A refusal before the body is awaited must not leave an unhandled rejection behind.
  body.catch(() => undefined);
  return { body, abort: () => abort() };
}

/** The bytes as a whole ArrayBuffer, ready to be transferred to a worker (copied only when they are a slice). */
export function wholeBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    ? (bytes.buffer as ArrayBuffer)
    : (bytes.slice().buffer as ArrayBuffer);
}
