// What may reach a response header (issue 13 item 1): the last check every header passes, the RFC 6750 quoting of
// dsec's error_description, token header values as a refusal quotes them, and ids and URLs as URI references.
import t from 'tap';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { safeHeaders, encodeUnsafe } from '../../src/front/header-safety.js';
import { errorDescription, MAX_ERROR_DESCRIPTION } from '../../src/plugins/auth/dsec/problems.js';
import { shown } from '../../src/plugins/auth/dsec/token.js';
import { pathSegment, uriReference } from '../../src/ngsild/uri-encode.js';
import { lookupRoute } from '../../src/front/router.js';
import { LdOp } from '../../src/ngsild/operations.js';

function logCapture(): { log: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { log: pino({ level: 'info' }, sink), lines };
}

/** What a header line may hold once written: visible ASCII, space, tab. */
const WRITABLE = /^[\t\x20-\x7e]*$/;

t.test('safeHeaders returns clean headers as they are, the same array', async (t) => {
  const { log, lines } = logCapture();
  const headers = ['Location', '/ngsi-ld/v1/entities/urn:ngsi-ld:T:1', 'Content-Type', 'application/json'];
  t.equal(safeHeaders(headers, log), headers);
  t.equal(lines.length, 0);
});

t.test('safeHeaders percent-encodes CR, LF, NUL, other controls and non-ASCII, and logs once per header name', async (t) => {
  const { log, lines } = logCapture();
  const values = [
    'x\r\nSet-Cookie: a=b',
    'x\r\n\r\n<html>',
    'a\u0000b',
    'a\u007fb',
    'caf\u00e9',
    '\u20ac',
    '\u2028\u0085',
    'lone \ud800 surrogate',
  ];
  for (const v of values) {
    const out = safeHeaders(['WWW-Authenticate', v, 'Content-Type', 'application/json'], log);
    // messages name the value by position: U+2028 in a TAP line would cut it
    t.equal(out.length, 4, `value ${values.indexOf(v)}`);
    t.match(out[1], WRITABLE);
    t.equal(out[3], 'application/json', 'the clean header after it is kept');
  }
  t.equal(safeHeaders(['Link', 'x\r\nY: z'], log)[1], 'x%0D%0AY: z');
  t.equal(encodeUnsafe('caf\u00e9'), 'caf%C3%A9', 'UTF-8 bytes');
  t.equal(lines.length, 2, 'one warning for WWW-Authenticate, one for Link');
  t.match(lines[0], /percent-encoded/);
});

t.test('safeHeaders remembers only what it found clean: a value or name near a recent clean one is still checked', async (t) => {
  const { log, lines } = logCapture();
  const link = '<https://example.org/ctx.jsonld>; rel="http://www.w3.org/ns/json-ld#context"';
  for (let round = 0; round < 3; round++)
    for (let i = 0; i < 20; i++) {
      const headers = ['Link', link, `X-N${i}`, `v${i}`];
      t.equal(safeHeaders(headers, log), headers, `clean headers ${i} as they are`);
    }
  t.same(safeHeaders(['Link', link + '\r\nSet-Cookie: a=b'], log), ['Link', link + '%0D%0ASet-Cookie: a=b']);
  t.same(safeHeaders(['X-N1', 'v1\u0000'], log), ['X-N1', 'v1%00']);
  t.same(safeHeaders(['X-N1\r\n', 'v1', 'X-N2', 'v2'], log), ['X-N2', 'v2'], 'a name that is not a token is left out');
  // one warning per name per process: Link was reported by an earlier test
  t.equal(lines.length, 2, 'X-N1 percent-encoded, X-N1\\r\\n left out');
});

t.test('safeHeaders leaves out a header whose name is no token', async (t) => {
  const { log, lines } = logCapture();
  const out = safeHeaders(['X-Ok', '1', 'Bad\r\nName', 'v', 'Also Bad', 'v', 'X-Next', '2'], log);
  t.same(out, ['X-Ok', '1', 'X-Next', '2']);
  t.equal(lines.length, 2);
  t.notMatch(lines.join(''), /\r\n/, 'the name is logged JSON-escaped');
});

t.test('errorDescription holds only what RFC 6750 §3 allows, bounded', async (t) => {
  const allowed = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
  const reasons = [
    'the key x\r\nSet-Cookie: a=b is not in the key set',
    'quote " and backslash \\',
    'tab\tand \u00e9\u2028',
    'k'.repeat(5000),
  ];
  for (const reason of reasons) {
    const d = errorDescription(reason);
    t.match(d, allowed, `reason ${reasons.indexOf(reason)}`);
    t.ok(d.length <= MAX_ERROR_DESCRIPTION);
  }
  t.equal(errorDescription('a "b" \\c'), "a 'b' /c");
  t.equal(errorDescription('the token has expired'), 'the token has expired', 'plain reasons are unchanged');
});

t.test('a token header value is quoted as visible ASCII, bounded', async (t) => {
  t.equal(shown('k1'), 'k1');
  t.equal(shown('x\r\nSet-Cookie: a'), 'x??Set-Cookie:?a');
  t.equal(shown(['RS256']), '["RS256"]');
  t.equal(shown(undefined), 'undefined');
  t.equal(shown('k'.repeat(500)).length, 64);
});

t.test('pathSegment keeps an NGSI-LD id readable and encodes what would change the path', async (t) => {
  t.equal(pathSegment('urn:ngsi-ld:Building:1'), 'urn:ngsi-ld:Building:1');
  t.equal(pathSegment("urn:x:a@b!$&'()*+,;=~._-"), "urn:x:a@b!$&'()*+,;=~._-");
  t.equal(pathSegment('urn:x:a/b?c#d%41'), 'urn:x:a%2Fb%3Fc%23d%2541');
  t.equal(pathSegment('urn:x:caf\u00e9'), 'urn:x:caf%C3%A9');
  t.equal(pathSegment('urn:x:\r\n'), 'urn:x:%0D%0A');
  for (const id of ['urn:x:a/b?c#d%41', 'urn:x:caf\u00e9\u20ac', 'urn:x:\u2028'])
    t.equal(decodeURIComponent(pathSegment(id)), id, 'decodes back');
});

t.test('uriReference keeps a URI and encodes what a URI reference cannot hold', async (t) => {
  t.equal(uriReference('https://example.org/ctx.jsonld?a=b#c'), 'https://example.org/ctx.jsonld?a=b#c');
  t.equal(uriReference('https://example.org/a%20b'), 'https://example.org/a%20b', 'existing escapes are kept');
  t.equal(uriReference('https://example.org/a b>c"d<e\u20ac'), 'https://example.org/a%20b%3Ec%22d%3Ce%E2%82%AC');
});

t.test('HEAD finds the GET operation; OPTIONS the methods of the path', async (t) => {
  t.match(lookupRoute('HEAD', '/ngsi-ld/v1/entities/urn:x:1'), { kind: 'op', op: LdOp.RetrieveEntity, params: ['urn:x:1'] });
  t.same(lookupRoute('HEAD', '/ngsi-ld/v1/entityOperations/create'), { kind: 'badMethod', allow: 'POST, OPTIONS' });
  t.same(lookupRoute('OPTIONS', '/ngsi-ld/v1/types'), { kind: 'options', allow: 'GET, HEAD, OPTIONS' });
  t.same(lookupRoute('OPTIONS', '/ngsi-ld/v1/nothing'), { kind: 'notFound' });
});
