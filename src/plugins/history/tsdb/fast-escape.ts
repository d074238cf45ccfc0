// @questdb/nodejs-client 4.2.0 escapes an ILP name or string value one character at a time, each character a
// Buffer.write of its own (SenderBufferBase.writeEscaped): 35 µs of the writer thread per PATCH, the larger part of
// what `--troe tsdb` cost a broker on one core (issue 18, issue 24). Almost every string the history writes (entity
// ids, attribute IRIs, JSON bodies) needs no escape at all, so this gives the client's buffer a fast path: a string
// without a character ILP escapes is written whole, in one Buffer.write of the same UTF-8 bytes; any other goes
// through the client's own loop. Everything else (protocol, buffer sizing, HTTP, retries) stays the client's.
// test/unit/tsdb-fast-escape.test.ts holds the two paths to the same bytes on arbitrary strings.
import type { Sender } from '@questdb/nodejs-client';

/** Characters the client escapes in names and symbols (unquoted), and in string column values (quoted). */
const UNQUOTED_SPECIAL = /[ ,=\n\r\\]/;
const QUOTED_SPECIAL = /["\n\r\\]/;
const PATCHED = Symbol.for('ldbroker.tsdb.fastEscape');

interface EscapingBuffer {
  write(data: string): void;
  writeEscaped(data: string, quoted?: boolean): void;
  [PATCHED]?: true;
}

/** The prototype that defines writeEscaped, from a sender's buffer; undefined if the client changed its shape. */
function escapingPrototype(sender: Sender): EscapingBuffer | undefined {
  let proto: unknown = Object.getPrototypeOf((sender as unknown as { buffer?: object }).buffer ?? {});
  while (proto !== null && proto !== Object.prototype) {
    if (Object.prototype.hasOwnProperty.call(proto, 'writeEscaped')) return proto as EscapingBuffer;
    proto = Object.getPrototypeOf(proto);
  }
  return undefined;
}

/**
 * Gives the client's buffer class the fast path, once per process (the class is shared by every sender). Returns
 * false, and leaves the client as it is, when its buffer is not shaped as 4.2.0's (another version).
 */
export function fastEscape(sender: Sender): boolean {
  const proto = escapingPrototype(sender);
  if (proto === undefined || typeof proto.write !== 'function' || typeof proto.writeEscaped !== 'function') return false;
  if (proto[PATCHED] === true) return true;
  const original = proto.writeEscaped;
  proto.writeEscaped = function (this: EscapingBuffer, data: string, quoted = false): void {
    if ((quoted ? QUOTED_SPECIAL : UNQUOTED_SPECIAL).test(data)) original.call(this, data, quoted);
    else this.write(data);
  };
  proto[PATCHED] = true;
  return true;
}
