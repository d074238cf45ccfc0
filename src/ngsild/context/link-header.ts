// The HTTP Link header that carries a JSON-LD @context (CIM 009 v1.8 §6.3.5; RFC 8288).
import { badRequest } from '../problem.js';

export const CONTEXT_REL = 'http://www.w3.org/ns/json-ld#context';

const LINK_RE = /^\s*<([^>]*)>\s*((?:;\s*[A-Za-z*-]+\s*(?:=\s*(?:"[^"]*"|[^;,\s]*))?\s*)*)$/;

/** The @context URL of a Link header; undefined when it names no context; 400 when it is no Link header or no URI. */
export function parseLinkHeader(value: string): string | undefined {
  let found: string | undefined;
  for (const link of splitLinks(value)) {
    const m = LINK_RE.exec(link);
    if (m === null) throw badRequest(`Link header '${value.slice(0, 200)}' is not a valid Link header`);
    const params = m[2]!;
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]*))/i.exec(params);
    const rels = (rel?.[1] ?? rel?.[2] ?? '').split(/\s+/);
    if (!rels.includes(CONTEXT_REL)) continue;
    if (found !== undefined) throw badRequest('the Link header names more than one @context');
    const url = m[1]!.trim();
    if (!/^(https?:\/\/[^\s]+|urn:[^\s]+)$/i.test(url)) throw badRequest(`the @context link '${url.slice(0, 200)}' is not an absolute http(s) or urn URI`);
    found = url;
  }
  return found;
}

function splitLinks(value: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && c === '<') depth++;
    else if (!quoted && c === '>') depth--;
    else if (!quoted && depth === 0 && c === ',') { out.push(value.slice(start, i)); start = i + 1; }
  }
  out.push(value.slice(start));
  return out.filter((s) => s.trim() !== '');
}

export function formatLinkHeader(url: string): string {
  return `<${url}>; rel="${CONTEXT_REL}"; type="application/ld+json"`;
}
