// The HTTP Link header that carries a JSON-LD @context (CIM 009 v1.8 §6.3.5; RFC 8288 §3 syntax;
// JSON-LD 1.1 API §9.4.2: at most one link of the context relation).
import { badRequest } from '../problem.js';
import { uriReference } from '../uri-encode.js';

export const CONTEXT_REL = 'http://www.w3.org/ns/json-ld#context';

/** RFC 7230 §3.2.6 tchar, plus `*` for RFC 8187 extended parameter names (`title*`). */
const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
const DELIMITER = /[;,\s"<>]/;
const URN = /^urn:[A-Za-z0-9][A-Za-z0-9-]{0,31}:\S+$/i;

interface Cursor {
  s: string;
  i: number;
}

/**
 * The @context URL of a Link header value (several links may be comma-separated, or headers joined with ", ").
 * Undefined when no link has rel `http://www.w3.org/ns/json-ld#context`. BadRequestData (400) when the value is
 * not Link header syntax, names more than one context, or the context target is not an absolute http(s)/urn URI.
 */
export function parseLinkHeader(value: string): string | undefined {
  const c: Cursor = { s: value, i: 0 };
  let found: string | undefined;
  for (;;) {
    skipSpace(c);
    while (c.s[c.i] === ',') {
      c.i++;
      skipSpace(c);
    }
    if (c.i >= c.s.length) break;
    const link = readLink(c);
    if (link.isContext) {
      if (found !== undefined) throw badRequest('the Link header names more than one @context');
      found = checkTarget(link.target);
    }
    skipSpace(c);
    if (c.i < c.s.length && c.s[c.i] !== ',') throw malformed(value, `unexpected '${c.s[c.i]}' after a link`);
  }
  return found;
}

/** The last Link header formatted, and its URL: nearly every answer links the same @context. */
let lastUrl = '';
let lastLink = '';

/**
 * The Link header naming `url` as the @context; a character a URI reference cannot hold is percent-encoded. The same
 * URL gives the same string, which the front's last header check then knows (front/header-safety.ts).
 */
export function formatLinkHeader(url: string): string {
  if (url !== lastUrl || lastLink === '') {
    lastLink = `<${uriReference(url)}>; rel="${CONTEXT_REL}"; type="application/ld+json"`;
    lastUrl = url;
  }
  return lastLink;
}

function readLink(c: Cursor): { target: string; isContext: boolean } {
  if (c.s[c.i] !== '<') throw malformed(c.s, 'a link must start with <URI>');
  const end = c.s.indexOf('>', c.i + 1);
  if (end < 0) throw malformed(c.s, 'a <URI> is not closed by >');
  const target = c.s.slice(c.i + 1, end).trim();
  c.i = end + 1;
  let isContext = false;
  let relSeen = false;
  for (;;) {
    skipSpace(c);
    if (c.s[c.i] !== ';') break;
    c.i++;
    skipSpace(c);
    const name = readName(c).toLowerCase();
    if (name === '') throw malformed(c.s, 'a link parameter has no name');
    skipSpace(c);
    let paramValue = '';
    if (c.s[c.i] === '=') {
      c.i++;
      skipSpace(c);
      paramValue = c.s[c.i] === '"' ? readQuoted(c) : readBareValue(c);
    }
    // RFC 8288 §3.3: only the first rel parameter counts; relation types compare case-insensitively.
    if (name === 'rel' && !relSeen) {
      relSeen = true;
      isContext = paramValue.split(/[ \t]+/).some((rel) => rel.toLowerCase() === CONTEXT_REL);
    }
  }
  return { target, isContext };
}

function readName(c: Cursor): string {
  const start = c.i;
  while (c.i < c.s.length && TCHAR.test(c.s[c.i]!)) c.i++;
  return c.s.slice(start, c.i);
}

/** An unquoted value: RFC 8288 wants a token, but unquoted URIs as rel values are common; read to a delimiter. */
function readBareValue(c: Cursor): string {
  const start = c.i;
  while (c.i < c.s.length && !DELIMITER.test(c.s[c.i]!)) c.i++;
  return c.s.slice(start, c.i);
}

function readQuoted(c: Cursor): string {
  let out = '';
  c.i++;
  while (c.i < c.s.length) {
    const ch = c.s[c.i]!;
    if (ch === '"') {
      c.i++;
      return out;
    }
    if (ch === '\\') {
      c.i++;
      if (c.i >= c.s.length) break;
    }
    out += c.s[c.i];
    c.i++;
  }
  throw malformed(c.s, 'a quoted string is not closed');
}

function skipSpace(c: Cursor): void {
  while (c.i < c.s.length && (c.s[c.i] === ' ' || c.s[c.i] === '\t')) c.i++;
}

function checkTarget(target: string): string {
  const shown = target.slice(0, 200);
  if (URN.test(target)) return target;
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw badRequest(`the @context link '${shown}' is not an absolute http(s) or urn URI`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || /\s/.test(target))
    throw badRequest(`the @context link '${shown}' is not an absolute http(s) or urn URI`);
  return target;
}

function malformed(value: string, why: string) {
  return badRequest(`Link header '${value.slice(0, 200)}' is not valid: ${why}`);
}
