import t, { type Test } from 'tap';
import { CONTEXT_REL, formatLinkHeader, parseLinkHeader } from '../../src/ngsild/context/link-header.js';
import { LdError } from '../../src/ngsild/problem.js';

const CTX = 'https://example.org/ctx.jsonld';

function badRequestData(t: Test, value: string, fragment: string): void {
  try {
    parseLinkHeader(value);
    t.fail(`accepted ${JSON.stringify(value)}`);
  } catch (e) {
    t.ok(e instanceof LdError, `${JSON.stringify(value)} throws an LdError`);
    t.equal((e as LdError).kind, 'BadRequestData', `${JSON.stringify(value)} is BadRequestData`);
    t.match((e as LdError).detail, fragment);
  }
}

t.test('the context link of a well-formed header is returned', async (t) => {
  t.equal(parseLinkHeader(`<${CTX}>; rel="${CONTEXT_REL}"; type="application/ld+json"`), CTX);
  t.equal(parseLinkHeader(`<${CTX}>;rel="${CONTEXT_REL}"`), CTX, 'no spaces');
  t.equal(parseLinkHeader(`  < ${CTX} >  ;  rel = "${CONTEXT_REL}"  `), CTX, 'spaces everywhere, URI trimmed');
  t.equal(parseLinkHeader(`<${CTX}>; rel=${CONTEXT_REL}`), CTX, 'unquoted rel URI');
  t.equal(parseLinkHeader(`<${CTX}>; REL="HTTP://WWW.W3.ORG/NS/JSON-LD#CONTEXT"`), CTX, 'rel compares case-insensitively');
  t.equal(parseLinkHeader(`<${CTX}>; rel="alternate ${CONTEXT_REL}"`), CTX, 'one of several relation types');
  t.equal(parseLinkHeader(`<urn:ngsi-ld:ctx:1>; rel="${CONTEXT_REL}"`), 'urn:ngsi-ld:ctx:1', 'urn target');
});

t.test('the context link is found among other links', async (t) => {
  const v = `<https://example.org/a>; rel="next"; title="a, b; c", <${CTX}>; rel="${CONTEXT_REL}", <https://x.org/b>; rel=prev`;
  t.equal(parseLinkHeader(v), CTX);
  t.equal(parseLinkHeader(`, ,<${CTX}>; rel="${CONTEXT_REL}",`), CTX, 'empty list elements are skipped');
  t.equal(parseLinkHeader(`<${CTX}>; title="say \\"hi\\"; rel=x"; rel="${CONTEXT_REL}"`), CTX, 'escaped quotes inside a quoted value');
});

t.test('a header without a context link answers undefined', async (t) => {
  t.equal(parseLinkHeader('<https://example.org/a>; rel="next"'), undefined);
  t.equal(parseLinkHeader(`<${CTX}>; title="rel=${CONTEXT_REL}"`), undefined, 'a rel inside another parameter does not count');
  t.equal(parseLinkHeader(`<${CTX}>`), undefined, 'no parameters');
  t.equal(parseLinkHeader(''), undefined, 'empty value');
  t.equal(parseLinkHeader(`<${CTX}>; rel="next"; rel="${CONTEXT_REL}"`), undefined, 'only the first rel counts (RFC 8288 §3.3)');
});

t.test('a malformed header is BadRequestData', async (t) => {
  badRequestData(t, `${CTX}; rel="${CONTEXT_REL}"`, 'must start with <URI>');
  badRequestData(t, `<${CTX}; rel="${CONTEXT_REL}"`, 'not closed by >');
  badRequestData(t, `<${CTX}>; rel="${CONTEXT_REL}`, 'quoted string is not closed');
  badRequestData(t, `<${CTX}> rel="${CONTEXT_REL}"`, 'unexpected');
  badRequestData(t, `<${CTX}>; ="x"`, 'no name');
  badRequestData(t, `<${CTX}>; rel"${CONTEXT_REL}"`, 'unexpected');
  badRequestData(t, 'garbage', 'must start with <URI>');
});

t.test('a context link whose target is not an absolute http(s) or urn URI is BadRequestData', async (t) => {
  for (const target of [
    'ctx.jsonld',
    '/ctx.jsonld',
    'ftp://example.org/c.jsonld',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'https://',
    'urn:x',
    'http://exa mple.org/c',
    '',
  ])
    badRequestData(t, `<${target}>; rel="${CONTEXT_REL}"`, 'not an absolute http(s) or urn URI');
});

t.test('two context links are BadRequestData (JSON-LD 1.1 API: multiple context link headers)', async (t) => {
  badRequestData(t, `<${CTX}>; rel="${CONTEXT_REL}", <https://x.org/c>; rel="${CONTEXT_REL}"`, 'more than one @context');
});

t.test('formatLinkHeader writes the context link that parseLinkHeader reads back', async (t) => {
  const v = formatLinkHeader(CTX);
  t.equal(v, `<${CTX}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`);
  t.equal(parseLinkHeader(v), CTX);
});

t.test('formatLinkHeader gives one string per @context URL, each its own', async (t) => {
  const other = 'https://example.org/other ctx.jsonld';
  const first = formatLinkHeader(CTX);
  t.equal(formatLinkHeader(CTX), first);
  t.equal(formatLinkHeader(other), `<https://example.org/other%20ctx.jsonld>; rel="${CONTEXT_REL}"; type="application/ld+json"`);
  t.equal(formatLinkHeader(CTX), first, 'back to the first URL');
  t.equal(parseLinkHeader(formatLinkHeader(other)), 'https://example.org/other%20ctx.jsonld');
});
