// The last check of every response header before an HTTP server writes it (both servers, the policy API too): no
// value a client influenced can split the response (CR, LF), cut it (NUL) or change bytes between the two servers.
import type { Logger } from '../logger.js';

/** RFC 9110 §5.1: a field name is a token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/**
 * What a value may hold as it is: visible ASCII, space and tab (RFC 9110 §5.5 field-vchar without obs-text). Latin-1
 * bytes (obs-text) are valid HTTP but uWS writes a string as UTF-8 and node:http as Latin-1, so the same value would
 * leave the two servers as different bytes; plain ASCII is the same on both.
 */
const UNSAFE_RUN = /[^\t\x20-\x7e]+/g;
const UNSAFE = /[^\t\x20-\x7e]/;

const encoder = new TextEncoder();
/** Header names already reported: one warning per name, not one per request (a client could repeat it at will). */
const reported = new Set<string>();
/** Past this many names nothing more is reported, so the set stays small whatever the names. */
const MAX_REPORTED = 64;

/**
 * The headers as they may be written: the same array when all are clean (the usual case, nothing allocated).
 * A value holding anything else has those characters percent-encoded as UTF-8 (RFC 3986 §2.1), and a header whose
 * name is no token is left out. Encoding, not dropping, keeps the answer valid: a 401 must carry WWW-Authenticate
 * (RFC 9110 §11.6.1), a 201 its Location, and these are where request data ends up; the encoded value is still a
 * readable URI or challenge, and holds nothing that can end the header line.
 */
export function safeHeaders(headers: readonly string[], log: Logger): readonly string[] {
  let i = 0;
  for (; i < headers.length; i += 2) if (!cleanName(headers[i]!) || !cleanValue(headers[i + 1]!)) break;
  if (i >= headers.length) return headers;
  const out = headers.slice(0, i);
  for (; i < headers.length; i += 2) {
    const name = headers[i]!;
    const value = headers[i + 1]!;
    if (!TOKEN.test(name)) {
      report(log, name, 'a response header whose name is not an HTTP token was left out');
      continue;
    }
    if (UNSAFE.test(value)) {
      report(log, name, 'a response header value held characters HTTP does not allow; they were percent-encoded');
      out.push(name, encodeUnsafe(value));
    } else {
      out.push(name, value);
    }
  }
  return out;
}

/**
 * Names and values found clean lately. The same strings come back on every answer (the names are the code's
 * literals, the Link of a @context is one string per @context, link-header.ts), so they are compared (one pointer
 * when the same string) before they are scanned again; only what passed the scan is kept, a few of each.
 */
const RECENT = 8;
const cleanNames: string[] = new Array<string>(RECENT).fill('Content-Type');
const cleanValues: string[] = new Array<string>(RECENT).fill('');
let nextName = 0;
let nextValue = 0;

function cleanName(name: string): boolean {
  for (let i = 0; i < RECENT; i++) if (cleanNames[i] === name) return true;
  if (!TOKEN.test(name)) return false;
  cleanNames[nextName] = name;
  nextName = (nextName + 1) % RECENT;
  return true;
}

function cleanValue(value: string): boolean {
  for (let i = 0; i < RECENT; i++) if (cleanValues[i] === value) return true;
  if (UNSAFE.test(value)) return false;
  cleanValues[nextValue] = value;
  nextValue = (nextValue + 1) % RECENT;
  return true;
}

/** The value with every character outside visible ASCII, space and tab percent-encoded as UTF-8. */
export function encodeUnsafe(value: string): string {
  return value.replace(UNSAFE_RUN, (run) => {
    let encoded = '';
    for (const byte of encoder.encode(run)) encoded += '%' + (byte < 16 ? '0' : '') + byte.toString(16).toUpperCase();
    return encoded;
  });
}

function report(log: Logger, name: string, message: string): void {
  // The name may itself be the unsafe part: logged JSON-escaped by pino, and bounded.
  const key = name.slice(0, 64);
  if (reported.has(key) || reported.size >= MAX_REPORTED) return;
  reported.add(key);
  log.warn({ header: key }, message);
}
