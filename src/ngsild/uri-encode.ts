// Client-given URIs (entity ids, @context URLs) put into a response header as URI references (RFC 3986): whatever
// they hold, the header gets a valid URI that names the same thing, and nothing that could end the header or the link.

const encoder = new TextEncoder();

/** RFC 3986 §3.3 pchar: unreserved, sub-delims, ':' and '@'. Everything else in a path segment is percent-encoded. */
const SEGMENT = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]*$/;
const SEGMENT_BYTE = byteTable("-._~!$&'()*+,;=:@");

/**
 * A path segment naming `value`: the router decodes a segment (router.ts), so an id holding `/`, `?`, `#` or `%`
 * comes back whole. `urn:ngsi-ld:T:1` stays as it is; an IRI's non-ASCII characters are encoded as UTF-8 (RFC 3987 §3.1).
 */
export function pathSegment(value: string): string {
  return SEGMENT.test(value) ? value : encodeBytes(value, SEGMENT_BYTE);
}

/** RFC 3986 §2: unreserved, reserved and '%' (a URI's own escapes are kept); the rest is percent-encoded. */
const REFERENCE = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;
const REFERENCE_BYTE = byteTable("-._~:/?#[]@!$&'()*+,;=%");

/** `url` as a URI reference: a space, `<`, `>`, `"`, a control or non-ASCII character is percent-encoded. */
export function uriReference(url: string): string {
  return REFERENCE.test(url) ? url : encodeBytes(url, REFERENCE_BYTE);
}

/**
 * RFC 3986 §3.4 query characters (pchar, '/', '?') and '%' (the client's own escapes are kept): one `name=value` of a
 * query as the client sent it, with everything else percent-encoded. Decoding gives what the raw text decoded to, so
 * the parameter keeps its meaning; a '#' (which would start a fragment), '>' (which would end a Link's URI), '[',
 * ']', a space, a quote, a control or non-ASCII character cannot stand in it.
 */
const QUERY_PART = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*$/;
const QUERY_PART_BYTE = byteTable("-._~!$&'()*+,;=:@/?%");

export function queryPart(raw: string): string {
  return QUERY_PART.test(raw) ? raw : encodeBytes(raw, QUERY_PART_BYTE);
}

function byteTable(marks: string): Uint8Array {
  const keep = new Uint8Array(128);
  for (let c = 0; c < 128; c++) {
    const ch = String.fromCharCode(c);
    if (/[A-Za-z0-9]/.test(ch) || marks.includes(ch)) keep[c] = 1;
  }
  return keep;
}

function encodeBytes(value: string, keep: Uint8Array): string {
  let out = '';
  // TextEncoder writes a lone surrogate as U+FFFD: the result is always valid UTF-8 percent-encoded.
  for (const byte of encoder.encode(value)) {
    out += byte < 128 && keep[byte] === 1 ? String.fromCharCode(byte) : '%' + (byte < 16 ? '0' : '') + byte.toString(16).toUpperCase();
  }
  return out;
}
