// Pagination links (CIM 009 v1.8 §5.5.9, §6.3.10): which of rel="prev" and rel="next" a page gets, the offsets and
// limits they name, and what of the request's own query may stand in a Link header.
import t from 'tap';
import { pageLinks } from '../../src/ops/page-links.js';
import { queryPart } from '../../src/ngsild/uri-encode.js';
import { LdRequest } from '../../src/pipeline/ld-request.js';
import { LdOp } from '../../src/ngsild/operations.js';
import { LD_JSON } from '../../src/pipeline/media.js';

const ROUTE = '/ngsi-ld/v1/entities';

function request(query: string): LdRequest {
  return new LdRequest({ op: LdOp.QueryEntities, route: ROUTE, method: 'GET', path: ROUTE, query, params: [], headers: {}, body: null });
}

/** The links as [rel, target] pairs. */
function links(headers: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i] !== 'Link') throw new Error(`not a Link header: ${headers[i]}`);
    const m = /^<([^>]*)>; rel="(prev|next)"; type="application\/json"$/.exec(headers[i + 1]!);
    if (m === null) throw new Error(`not a page link: ${headers[i + 1]}`);
    out.push([m[2]!, m[1]!]);
  }
  return out;
}

/** What a header line may hold once written: visible ASCII, space, tab. */
const WRITABLE = /^[\t\x20-\x7e]*$/;

t.test('the first page of several has rel="next" only, the last rel="prev" only, a middle one both', async (t) => {
  const q = 'type=T&limit=10&offset=0';
  t.same(links(pageLinks(request(q), 10, 0, true)), [['next', `${ROUTE}?type=T&limit=10&offset=10`]]);
  t.same(links(pageLinks(request(q), 10, 20, true)), [
    ['prev', `${ROUTE}?type=T&limit=10&offset=10`],
    ['next', `${ROUTE}?type=T&limit=10&offset=30`],
  ]);
  t.same(links(pageLinks(request(q), 10, 30, false)), [['prev', `${ROUTE}?type=T&limit=10&offset=20`]]);
});

t.test('a single page has no link; limit=0 (a count alone) has none whatever the offset', async (t) => {
  t.same(pageLinks(request('type=T'), 20, 0, false), []);
  t.same(pageLinks(request('type=T&limit=0&count=true'), 0, 0, true), []);
  t.same(pageLinks(request('type=T&limit=0&offset=5&count=true'), 0, 5, true), []);
});

t.test('the previous page of an offset below the limit is the items before it, so the two pages do not overlap', async (t) => {
  t.same(links(pageLinks(request('type=T'), 10, 3, false)), [['prev', `${ROUTE}?type=T&limit=3&offset=0`]]);
  t.same(links(pageLinks(request('type=T'), 10, 10, false)), [['prev', `${ROUTE}?type=T&limit=10&offset=0`]]);
});

t.test("the request's other parameters keep their order and text; limit and offset come last, once", async (t) => {
  const q = 'offset=4&q=speed%3E10&limit=2&type=Car,Bus&count=true&options=keyValues';
  t.same(links(pageLinks(request(q), 2, 4, true)), [
    ['prev', `${ROUTE}?q=speed%3E10&type=Car,Bus&count=true&options=keyValues&limit=2&offset=2`],
    ['next', `${ROUTE}?q=speed%3E10&type=Car,Bus&count=true&options=keyValues&limit=2&offset=6`],
  ]);
  // A percent-encoded name is the parameter it decodes to (query-params.ts); an empty part is dropped.
  t.same(links(pageLinks(request('%6Cimit=2&&type=T&%6Fffset=2'), 2, 2, false)), [['prev', `${ROUTE}?type=T&limit=2&offset=0`]]);
  t.same(links(pageLinks(request(''), 5, 0, true)), [['next', `${ROUTE}?limit=5&offset=5`]]);
});

t.test('client text that cannot stand in a Link target is percent-encoded, meaning the same once decoded', async (t) => {
  const raw = 'q=name=="a>b c"&x=<script>&frag=a#b&coordinates=[1,2]&name=caf\u00e9&ctl=\u0001\u007f';
  const [[, next]] = links(pageLinks(request(raw), 1, 0, true)) as [[string, string]];
  t.equal(
    next,
    `${ROUTE}?q=name==%22a%3Eb%20c%22&x=%3Cscript%3E&frag=a%23b&coordinates=%5B1,2%5D&name=caf%C3%A9&ctl=%01%7F&limit=1&offset=1`,
  );
  t.match(next, WRITABLE);
  t.notMatch(next, /[<>"#\s[\]]/, 'nothing that would end the target, start a fragment or split the header');
  const decoded = new URLSearchParams(next.slice(next.indexOf('?') + 1).replace(/\+/g, '%2B'));
  t.equal(decoded.get('q'), 'name=="a>b c"');
  t.equal(decoded.get('frag'), 'a#b');
  t.equal(decoded.get('name'), 'caf\u00e9');
});

t.test('the link type is the media type of the answer', async (t) => {
  const req = request('type=T');
  req.media = LD_JSON;
  t.same(pageLinks(req, 1, 1, true), [
    'Link',
    `<${ROUTE}?type=T&limit=1&offset=0>; rel="prev"; type="application/ld+json"`,
    'Link',
    `<${ROUTE}?type=T&limit=1&offset=2>; rel="next"; type="application/ld+json"`,
  ]);
});

t.test('queryPart keeps a query part that needs nothing encoded as it is, the same string', async (t) => {
  const clean = "q=a==1;b!=2;(c~=x.*)&scopeQ=/a/+&attrs=a,b&id=urn:ngsi-ld:T:1&p=%20&z=@'()*$/?";
  t.equal(queryPart(clean), clean);
  t.equal(queryPart('a b'), 'a%20b');
  t.equal(queryPart('q=a==1|b==2'), 'q=a==1%7Cb==2', "RFC 3986 has no '|' in a query: NGSI-LD's or is encoded");
  t.equal(queryPart('\ud800'), '%EF%BF%BD', 'a lone surrogate is written as U+FFFD');
});
