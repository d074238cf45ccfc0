// Reading a WebSocket message into a request (src/front/ws/message.ts) and framing an answer (ws-exchange.ts): the
// inputs a client controls, checked without a broker.
import t from 'tap';
import { readWsMessage, isRejected } from '../../src/front/ws/message.js';
import { encodeAnswer } from '../../src/front/ws/ws-exchange.js';

const enc = new TextEncoder();
const read = (v: unknown, max = 1000) =>
  readWsMessage(enc.encode(typeof v === 'string' ? v : JSON.stringify(v)).buffer as ArrayBuffer, max);
const meta = { method: 'get', path: '/ngsi-ld/v1/types', correlationId: 'c' };

t.test('a request: method upper-cased, header names lower-cased, a body re-serialized as application/json', async (t) => {
  const m = read({ metadata: { ...meta, method: 'post', query: 'a=1', headers: { Link: '<x>', 'NGSILD-Tenant': 't' } }, body: { a: 1 } });
  t.notOk(isRejected(m));
  if (isRejected(m)) return;
  t.equal(m.method, 'POST');
  t.equal(m.query, 'a=1');
  t.equal(m.headers.link, '<x>');
  t.equal(m.headers['ngsild-tenant'], 't');
  t.equal(m.headers['content-type'], 'application/json');
  t.equal(new TextDecoder().decode(m.body!), '{"a":1}');
});

t.test('headers named like members of Object.prototype are headers like any other, and none is inherited', async (t) => {
  const m = read(`{"metadata":{"method":"GET","path":"/x","correlationId":"c","headers":{"__proto__":"p","constructor":"k"}}}`);
  if (isRejected(m)) return t.fail('rejected');
  t.equal(m.headers['__proto__'], 'p');
  t.equal(m.headers.constructor, 'k');
  t.equal(m.headers.toString, undefined);
  t.equal(m.headers.hasOwnProperty, undefined);
});

t.test('bad inputs are refused with the correlation id when it was read', async (t) => {
  const cases: Array<[unknown, string | null, RegExp]> = [
    ['\u00ff', null, /JSON object/],
    ['null', null, /"metadata" object/],
    [{ metadata: [] }, null, /"metadata" object/],
    [{ metadata: { ...meta, correlationId: '' } }, null, /correlationId/],
    [{ metadata: { ...meta, method: 'GET1' } }, 'c', /method/],
    [{ metadata: { ...meta, method: 'X'.repeat(17) } }, 'c', /method/],
    [{ metadata: { ...meta, path: '/é' } }, 'c', /path/],
    [{ metadata: { ...meta, query: 3 } }, 'c', /query/],
    [{ metadata: { ...meta, headers: { 'x y': '1' } } }, 'c', /token/],
    [{ metadata: meta, body: 'x'.repeat(2000) }, 'c', /larger than 1000 bytes/],
  ];
  for (const [input, cid, detail] of cases) {
    const m = read(input);
    t.ok(isRejected(m), JSON.stringify(input).slice(0, 60));
    if (!isRejected(m)) continue;
    t.equal(m.correlationId, cid);
    t.match(m.problem.detail, detail);
  }
  // A body nested deeper than JSON.stringify goes: refused, not thrown.
  const deep = `{"metadata":${JSON.stringify(meta)},"body":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
  const m = read(deep, 10_000_000);
  t.ok(isRejected(m) && /nested too deeply/.test(m.problem.detail));
  // An invalid UTF-8 sequence in a binary message.
  const bad = readWsMessage(new Uint8Array([0x7b, 0xc3, 0x28, 0x7d]).buffer, 1000);
  t.ok(isRejected(bad));
});

t.test('an answer splices a JSON body in as it is and carries any other as a JSON string', async (t) => {
  const json = new TextDecoder().decode(encodeAnswer('a', 200, ['Content-Type', 'application/ld+json'], enc.encode('{"x":[1]}')));
  t.same(JSON.parse(json), {
    metadata: { correlationId: 'a', status: 200, headers: { 'Content-Type': 'application/ld+json' } },
    body: { x: [1] },
  });
  const text = new TextDecoder().decode(encodeAnswer(null, 200, ['Content-Type', 'text/plain'], enc.encode('a"b')));
  t.same(JSON.parse(text).body, 'a"b');
  const none = JSON.parse(new TextDecoder().decode(encodeAnswer('b', 204, ['X', '1', 'X', '2'], null)));
  t.same(none, { metadata: { correlationId: 'b', status: 204, headers: { X: '1, 2' } } });
});
