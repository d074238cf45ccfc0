// The policy API on --policyApiPort (seed 000 §4.1, §7): exactly the PAP's /policy routes, their status codes and
// shapes, uid uniqueness under concurrency, and every bad input answered with a ProblemDetails and nothing stored.
import t, { type Test } from 'tap';
import { connect } from 'node:net';
import { startBroker, runBroker, runBrokerHere, call, NGSI, type Broker, type Reply } from './helpers/broker.js';

let broker: Broker;
let pap: string;

/** The policy port, from the broker's 'policy API listening' log line. */
function policyPortOf(b: Broker): number {
  for (const line of b.logs) {
    try {
      const rec = JSON.parse(line) as { msg?: string; port?: number };
      if (rec.msg === 'policy API listening' && rec.port !== undefined) return rec.port;
    } catch {
      /* not a log line */
    }
  }
  throw new Error('the broker did not log its policy port');
}

t.before(async () => {
  broker = await startBroker(['--policyApiPort', '0', '--logLevel', 'info']);
  pap = `http://127.0.0.1:${policyPortOf(broker)}`;
});
t.teardown(async () => {
  await broker.stop();
});

const policy = (uid: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  '@context': { odrl: 'http://www.w3.org/ns/odrl/2/' },
  '@type': 'odrl:Policy',
  'odrl:uid': uid,
  'odrl:permission': { 'odrl:action': 'odrl:read', 'odrl:assignee': 'vc:any', 'odrl:target': 'urn:asset:1' },
  ...extra,
});

/** A constraint on `left` inside a policy's target refinement. */
const withConstraint = (uid: string, constraint: Record<string, unknown>): Record<string, unknown> =>
  policy(uid, {
    'odrl:permission': {
      'odrl:action': 'odrl:read',
      'odrl:assignee': 'vc:any',
      'odrl:target': {
        '@type': 'odrl:AssetCollection',
        'odrl:refinement': {
          '@type': 'odrl:LogicalConstraint',
          'odrl:and': [
            { 'odrl:leftOperand': 'ngsi-ld:entityType', 'odrl:operator': 'odrl:eq', 'odrl:rightOperand': 'Building' },
            { 'odrl:operator': 'odrl:eq', 'odrl:rightOperand': 'x', ...constraint },
          ],
        },
      },
    },
  });

async function listAll(): Promise<Array<{ id: string; 'odrl:uid': string; odrl: string }>> {
  const out = [];
  for (let page = 0; ; page++) {
    const r = await call(pap, 'GET', `/policy?page=${page}&pageSize=100`);
    if (r.status !== 200) throw new Error(r.text);
    if (r.json.length === 0) return out;
    out.push(...r.json);
  }
}

async function clearAll(): Promise<void> {
  for (const entry of await listAll()) await call(pap, 'DELETE', `/policy/${entry.id}`);
}

function isProblem(t: Test, r: Reply, status: number): void {
  t.equal(r.status, status, r.text);
  t.match(r.headers.get('content-type'), /^application\/(problem\+)?json/);
  t.equal(r.json?.type, 'about:blank');
  t.equal(r.json?.status, status);
  t.type(r.json?.title, 'string');
  t.type(r.json?.detail, 'string');
}

t.test('POST /policy answers 200 with the new ten-letter id in Location and an empty body', async (t) => {
  await clearAll();
  const r = await call(pap, 'POST', '/policy', { body: policy('urn:p:create') });
  t.equal(r.status, 200, r.text);
  t.match(r.headers.get('location'), /^[A-Za-z]{10}$/);
  t.equal(r.text, '');
  const again = await call(pap, 'POST', '/policy', { body: policy('urn:p:create-2') });
  t.not(again.headers.get('location'), r.headers.get('location'), 'each policy has its own id');
});

t.test('the listing entry is {id, odrl:uid, odrl} with odrl the policy text exactly as sent, and no rego', async (t) => {
  await clearAll();
  const text = '{ "odrl:uid" : "urn:p:exact",\n  "n": 1.0, "big": 12345678901234567890, "s": "\\u00e9" }';
  const c = await call(pap, 'POST', '/policy', { raw: text, headers: { 'content-type': 'application/json' } });
  t.equal(c.status, 200, c.text);
  const l = await call(pap, 'GET', '/policy');
  t.equal(l.status, 200);
  t.match(l.headers.get('content-type'), /^application\/json/);
  t.same(l.json, [{ id: c.headers.get('location'), 'odrl:uid': 'urn:p:exact', odrl: text }]);
  t.notOk('rego' in l.json[0]);
});

t.test('GET /policy/{id} and GET /policy/odrl/{uid} answer the policy; absent ones answer 404', async (t) => {
  await clearAll();
  const uid = 'urn:ngsi-ld:policy/with slash';
  const c = await call(pap, 'POST', '/policy', { body: policy(uid) });
  const id = c.headers.get('location')!;
  const byId = await call(pap, 'GET', `/policy/${id}`);
  t.equal(byId.status, 200);
  t.same(byId.json, { id, 'odrl:uid': uid, odrl: JSON.stringify(policy(uid)) });
  const byUid = await call(pap, 'GET', `/policy/odrl/${encodeURIComponent(uid)}`);
  t.equal(byUid.status, 200);
  t.same(byUid.json, byId.json);
  isProblem(t, await call(pap, 'GET', '/policy/abcdefghij'), 404);
  isProblem(t, await call(pap, 'GET', '/policy/odrl/urn%3Anone'), 404);
  isProblem(t, await call(pap, 'GET', '/policy/short'), 404);
  isProblem(t, await call(pap, 'GET', '/policy/odrl/%E0%A4%A'), 400);
});

t.test('the listing is in creation order, 25 a page by default, pages numbered from 0, empty past the end', async (t) => {
  await clearAll();
  const ids: string[] = [];
  for (let i = 0; i < 27; i++)
    ids.push((await call(pap, 'POST', '/policy', { body: policy(`urn:p:order:${i}`) })).headers.get('location')!);
  const first = await call(pap, 'GET', '/policy');
  t.same(
    first.json.map((e: { id: string }) => e.id),
    ids.slice(0, 25),
  );
  const page0 = await call(pap, 'GET', '/policy?page=0&pageSize=25');
  t.same(page0.json, first.json, 'page 0 is the first page');
  const page1 = await call(pap, 'GET', '/policy?page=1');
  t.same(
    page1.json.map((e: { id: string }) => e.id),
    ids.slice(25),
  );
  const small = await call(pap, 'GET', '/policy?page=2&pageSize=4');
  t.same(
    small.json.map((e: { 'odrl:uid': string }) => e['odrl:uid']),
    ['urn:p:order:8', 'urn:p:order:9', 'urn:p:order:10', 'urn:p:order:11'],
  );
  t.same((await call(pap, 'GET', '/policy?page=2')).json, []);
  t.same((await call(pap, 'GET', '/policy?page=2147483647&pageSize=1000')).json, []);
  t.equal((await call(pap, 'GET', '/policy?pageSize=1000')).json.length, 27);
});

t.test('bad page and pageSize answer 400 naming the parameter (no clamping)', async (t) => {
  for (const [q, name] of [
    ['page=-1', 'page'],
    ['page=abc', 'page'],
    ['page=1.5', 'page'],
    ['page=', 'page'],
    ['page=2147483648', 'page'],
    ['page=1e3', 'page'],
    ['pageSize=0', 'pageSize'],
    ['pageSize=-3', 'pageSize'],
    ['pageSize=1001', 'pageSize'],
    ['pageSize=99999999999999', 'pageSize'],
    ['pageSize=%20', 'pageSize'],
  ]) {
    const r = await call(pap, 'GET', `/policy?${q}`);
    isProblem(t, r, 400);
    t.match(r.json.detail, new RegExp(`^${name} `), q);
  }
});

t.test('PUT /policy/{id} creates the policy under that id, then replaces it in place', async (t) => {
  await clearAll();
  const a = (await call(pap, 'POST', '/policy', { body: policy('urn:p:a') })).headers.get('location')!;
  const created = await call(pap, 'PUT', '/policy/AbCdEfGhIj', { body: policy('urn:p:put') });
  t.equal(created.status, 200, created.text);
  t.equal(created.headers.get('location'), 'AbCdEfGhIj');
  t.equal(created.text, '');
  const replaced = await call(pap, 'PUT', `/policy/${a}`, { body: policy('urn:p:a2', { 'odrl:profile': 'x' }) });
  t.equal(replaced.status, 200, replaced.text);
  t.equal(replaced.headers.get('location'), a);
  const list = await listAll();
  t.same(
    list.map((e) => [e.id, e['odrl:uid']]),
    [
      [a, 'urn:p:a2'],
      ['AbCdEfGhIj', 'urn:p:put'],
    ],
    'replaced in place, creation order kept',
  );
  t.equal(list[0]!.odrl, JSON.stringify(policy('urn:p:a2', { 'odrl:profile': 'x' })));
  t.equal((await call(pap, 'GET', '/policy/odrl/urn%3Ap%3Aa')).status, 404, 'the old uid is gone');
  t.equal((await call(pap, 'POST', '/policy', { body: policy('urn:p:a') })).status, 200, 'and free again');
  t.equal((await call(pap, 'PUT', `/policy/${a}`, { body: policy('urn:p:a2') })).status, 200, 'a PUT keeping its own uid');
});

t.test('PUT to an id that is not ten letters answers 400 and stores nothing', async (t) => {
  await clearAll();
  for (const id of ['abc', 'abcdefghi1', 'abcdefghijk', 'abcde-ghij', '%C3%A9bcdefghij', 'abcdefghi%20']) {
    const r = await call(pap, 'PUT', `/policy/${id}`, { body: policy(`urn:p:bad-id:${id}`) });
    isProblem(t, r, 400);
    t.match(r.json.detail, /ten letters/);
  }
  t.same(await listAll(), []);
});

t.test('a duplicate odrl:uid answers 409: on POST, and on PUT when another id holds it', async (t) => {
  await clearAll();
  const a = (await call(pap, 'POST', '/policy', { body: policy('urn:p:dup') })).headers.get('location')!;
  isProblem(t, await call(pap, 'POST', '/policy', { body: policy('urn:p:dup', { other: true }) }), 409);
  isProblem(t, await call(pap, 'PUT', '/policy/zzzzzzzzzz', { body: policy('urn:p:dup') }), 409);
  const list = await listAll();
  t.same(
    list.map((e) => e.id),
    [a],
    'nothing stored by the refused writes',
  );
  t.equal(list[0]!.odrl, JSON.stringify(policy('urn:p:dup')));
});

t.test('concurrent POSTs of one uid: exactly one stores it, every other answers 409', async (t) => {
  await clearAll();
  const replies = await Promise.all(
    Array.from({ length: 12 }, (_, i) => call(pap, 'POST', '/policy', { body: policy('urn:p:race', { n: i }) })),
  );
  t.equal(replies.filter((r) => r.status === 200).length, 1);
  t.equal(replies.filter((r) => r.status === 409).length, 11);
  const list = await listAll();
  t.equal(list.length, 1);
  const winner = replies.find((r) => r.status === 200)!;
  t.equal(list[0]!.id, winner.headers.get('location'));
  // Concurrent PUTs of one new uid to different ids: one wins as well.
  const puts = await Promise.all(
    ['aaaaaaaaaa', 'bbbbbbbbbb', 'cccccccccc'].map((id) => call(pap, 'PUT', `/policy/${id}`, { body: policy('urn:p:race-put') })),
  );
  t.same(puts.map((r) => r.status).sort(), [200, 409, 409]);
});

t.test('DELETE answers 204 whether or not the policy existed, by id and by uid', async (t) => {
  await clearAll();
  const a = (await call(pap, 'POST', '/policy', { body: policy('urn:p:del-a') })).headers.get('location')!;
  await call(pap, 'POST', '/policy', { body: policy('urn:p:del-b') });
  const byId = await call(pap, 'DELETE', `/policy/${a}`);
  t.equal(byId.status, 204);
  t.equal(byId.text, '');
  t.equal(byId.headers.get('content-length'), null, 'a 204 carries no Content-Length');
  t.equal((await call(pap, 'GET', `/policy/${a}`)).status, 404);
  t.equal((await call(pap, 'DELETE', `/policy/${a}`)).status, 204, 'again: 204');
  t.equal((await call(pap, 'DELETE', '/policy/odrl/urn%3Ap%3Adel-b')).status, 204);
  t.equal((await call(pap, 'DELETE', '/policy/odrl/urn%3Ap%3Adel-b')).status, 204, 'again: 204');
  t.equal((await call(pap, 'DELETE', '/policy/notanid')).status, 204);
  t.same(await listAll(), []);
  t.equal((await call(pap, 'POST', '/policy', { body: policy('urn:p:del-b') })).status, 200, 'a deleted uid is free');
});

t.test('a body that is no JSON object, or has no string odrl:uid, answers 400 and stores nothing', async (t) => {
  await clearAll();
  const bodies: Array<[string, string | Uint8Array]> = [
    ['not JSON', '{"odrl:uid": "urn:p:x",'],
    ['not UTF-8', new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])],
    ['an array', '[{"odrl:uid": "urn:p:x"}]'],
    ['a string', '"urn:p:x"'],
    ['null', 'null'],
    ['a number', '42'],
    ['no odrl:uid', '{"@type": "odrl:Policy"}'],
    ['odrl:uid a number', '{"odrl:uid": 7}'],
    ['odrl:uid an object', '{"odrl:uid": {"@id": "urn:p:x"}}'],
    ['odrl:uid null', '{"odrl:uid": null}'],
    ['odrl:uid an array', '{"odrl:uid": ["urn:p:x"]}'],
    ['odrl:uid empty', '{"odrl:uid": ""}'],
    ['only the full-IRI uid', '{"http://www.w3.org/ns/odrl/2/uid": "urn:p:x"}'],
  ];
  for (const [what, raw] of bodies) {
    const r = await call(pap, 'POST', '/policy', { raw, headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 400, what);
    isProblem(t, r, 400);
    const put = await call(pap, 'PUT', '/policy/abcdefghij', { raw, headers: { 'content-type': 'application/json' } });
    t.equal(put.status, 400, `PUT: ${what}`);
  }
  const empty = await call(pap, 'POST', '/policy');
  isProblem(t, empty, 400);
  t.same(await listAll(), []);
});

t.test('a policy nested deeper than 64 levels answers 400 and is not stored (dsec could not compile it)', async (t) => {
  await clearAll();
  const deep = (levels: number): string => '{"odrl:uid":"urn:p:deep","x:junk":' + '{"a":'.repeat(levels) + '1' + '}'.repeat(levels) + '}';
  for (const levels of [64, 100_000]) {
    const r = await call(pap, 'POST', '/policy', { raw: deep(levels), headers: { 'content-type': 'application/json' } });
    isProblem(t, r, 400);
    t.equal(r.json.detail, 'the policy is nested deeper than 64 levels', `${levels} levels`);
  }
  t.same(await listAll(), []);
  const atBound = await call(pap, 'POST', '/policy', { raw: deep(63), headers: { 'content-type': 'application/json' } });
  t.equal(atBound.status, 200, `64 levels are kept: ${atBound.text}`);
  await clearAll();
});

t.test('a left operand without its argument answers 400 naming the missing parameter and is not stored', async (t) => {
  await clearAll();
  const missing: Array<[string, Record<string, unknown>, string]> = [
    ['odrl:leftOperand http:bodyValue', { 'odrl:leftOperand': 'http:bodyValue' }, 'http:bodyValue'],
    ['@id http:bodyValue without @value', { 'odrl:leftOperand': { '@id': 'http:bodyValue' } }, 'http:bodyValue'],
    ['@id ovc:leftOperand with an empty @value', { 'odrl:leftOperand': { '@id': 'ovc:leftOperand', '@value': '' } }, 'ovc:leftOperand'],
    ['member http:bodyValue equal to its name', { 'http:bodyValue': 'http:bodyValue' }, 'http:bodyValue'],
    ['member http:bodyValue an empty object', { 'http:bodyValue': {} }, 'http:bodyValue'],
    ['member ovc:leftOperand a number', { 'ovc:leftOperand': 3 }, 'ovc:leftOperand'],
  ];
  for (const [what, constraint, word] of missing) {
    const r = await call(pap, 'POST', '/policy', { body: withConstraint(`urn:p:lo:${what}`, constraint) });
    isProblem(t, r, 400);
    t.match(r.json.detail, `the left operand '${word}' requires a parameter`, what);
    t.match(r.json.detail, /path/, `${what}: says which parameter`);
  }
  const put = await call(pap, 'PUT', '/policy/abcdefghij', {
    body: withConstraint('urn:p:lo:put', { 'odrl:leftOperand': 'ovc:leftOperand' }),
  });
  isProblem(t, put, 400);
  t.same(await listAll(), [], 'none stored');
  const given: Array<[string, Record<string, unknown>]> = [
    ['member with a path', { 'http:bodyValue': '$.a.b' }],
    ['@id with @value', { 'odrl:leftOperand': { '@id': 'http:bodyValue', '@value': '$.a' } }],
    ['ovc member with @value', { 'ovc:leftOperand': { '@value': 'credentialSubject.x' } }],
    ['another left operand', { 'odrl:leftOperand': 'vc:role' }],
  ];
  for (const [what, constraint] of given) {
    t.equal((await call(pap, 'POST', '/policy', { body: withConstraint(`urn:p:lo-ok:${what}`, constraint) })).status, 200, what);
  }
  const inContext = policy('urn:p:lo-ctx', { '@context': { 'http:bodyValue': 'https://example.org/term' } });
  t.equal((await call(pap, 'POST', '/policy', { body: inContext })).status, 200, 'a term of the @context is no constraint');
});

t.test('a body over --maxBodySize answers 413 (declared or streamed) and the port keeps serving', async (t) => {
  const big = new Uint8Array(10 * 1024 * 1024).fill(0x20);
  const r = await call(pap, 'POST', '/policy', { raw: big, headers: { 'content-type': 'application/json' } }).catch(
    () => ({ status: -1 }) as Reply,
  );
  t.equal(r.status, 413);
  if (r.status === 413) isProblem(t, r, 413);
  const chunk = new Uint8Array(1024 * 1024).fill(0x20);
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent++ < 10) controller.enqueue(chunk);
      else controller.close();
    },
  });
  const streamed = await fetch(`${pap}/policy`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit).then(
    (res) => res.status,
    () => -1,
  );
  t.equal(streamed, 413, 'a chunked body growing past the cap');
  t.equal((await call(pap, 'GET', '/policy')).status, 200, 'still serving');
});

t.test('other methods on the policy paths answer 405 with Allow', async (t) => {
  for (const [method, path, allow] of [
    ['PATCH', '/policy', 'GET, POST'],
    ['PUT', '/policy', 'GET, POST'],
    ['DELETE', '/policy', 'GET, POST'],
    ['POST', '/policy/abcdefghij', 'GET, PUT, DELETE'],
    ['PATCH', '/policy/abcdefghij', 'GET, PUT, DELETE'],
    ['PUT', '/policy/odrl/urn%3Ax', 'GET, DELETE'],
    ['POST', '/policy/odrl/urn%3Ax', 'GET, DELETE'],
  ]) {
    const r = await call(pap, method!, path!, { body: policy('urn:p:405') });
    isProblem(t, r, 405);
    t.equal(r.headers.get('allow'), allow, `${method} ${path}`);
  }
});

t.test("the reference PAP's other routes and the NGSI-LD API are not on the policy port", async (t) => {
  for (const path of [
    '/service',
    '/service/abc/policy',
    '/template/x',
    '/validate',
    '/mappings',
    '/bundles/service/v1',
    '/policy/',
    '/policy/abcdefghij/x',
    '/policy/odrl/',
    '/',
    `${NGSI}/entities`,
    `${NGSI}/types`,
  ]) {
    isProblem(t, await call(pap, 'GET', path), 404);
  }
  t.equal((await call(pap, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:X:1', type: 'X' } })).status, 404);
});

t.test('/policy is not on the NGSI-LD port', async (t) => {
  await clearAll();
  await call(pap, 'POST', '/policy', { body: policy('urn:p:ngsi') });
  const r = await call(broker, 'GET', '/policy');
  t.equal(r.status, 404);
  t.notOk(Array.isArray(r.json), 'no listing');
  t.equal((await call(broker, 'POST', '/policy', { body: policy('urn:p:ngsi-2') })).status, 404);
  t.equal((await listAll()).length, 1, 'nothing stored through the NGSI-LD port');
});

t.test('a WebSocket upgrade request is answered as plain HTTP, never 101', async (t) => {
  const port = Number(new URL(pap).port);
  const head = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        'GET /policy HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
          'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      );
    });
    let data = '';
    socket.on('data', (d) => {
      data += String(d);
      if (data.includes('\r\n\r\n')) {
        socket.destroy();
        resolve(data);
      }
    });
    socket.on('error', reject);
    setTimeout(() => {
      socket.destroy();
      resolve(data);
    }, 3000);
  });
  t.notMatch(head, /^HTTP\/1\.1 101/);
  t.match(head, /^HTTP\/1\.1 200/);
  t.notMatch(head, /sec-websocket-accept/i);
});

t.test('ProblemDetails are application/problem+json when the client accepts it', async (t) => {
  const r = await call(pap, 'GET', '/policy/odrl/urn%3Anone', { headers: { accept: 'application/problem+json' } });
  t.equal(r.status, 404);
  t.equal(r.headers.get('content-type'), 'application/problem+json');
});

t.test('the policy port listens on 127.0.0.1 unless --policyApiHost says otherwise', async (t) => {
  const line = broker.logs.map((l) => JSON.parse(l) as { msg?: string; host?: string }).find((r) => r.msg === 'policy API listening');
  t.equal(line?.host, '127.0.0.1');
});

t.test('without --policyApiPort there is no policy port', async (t) => {
  const plain = await startBroker(['--logLevel', 'info']);
  t.teardown(() => plain.stop());
  t.notOk(plain.logs.some((l) => l.includes('policy API listening')));
  t.equal((await call(plain, 'GET', '/policy')).status, 404);
});

t.test('--policyApiPort with the node:http server is refused at start-up with one line and status 1', async (t) => {
  const r = await runBroker(['--port', '0', '--httpServer', 'node', '--policyApiPort', '0']);
  t.equal(r.code, 1);
  t.match(r.stderr, /^ldbroker: --policyApiPort needs the uWebSockets\.js server[^\n]*\n$/);
  const bad = await runBrokerHere(['--port', '0', '--policyApiPort', 'x']); // as main.ts runs it, in this process
  t.equal(bad.code, 1);
  t.match(bad.stderr, /--policyApiPort/);
});

t.test('-u lists --policyApiPort and --policyApiHost with its default', async (t) => {
  const r = await runBrokerHere(['-u']); // as main.ts prints it, in this process
  t.equal(r.code, 0);
  t.match(r.stdout, /--policyApiPort\s+int\s+port of the policy API/);
  t.match(r.stdout, /--policyApiHost\s+string\s+address the policy API listens on \(default: 127\.0\.0\.1\)/);
});

t.test('--policyApiHost binds the policy port to that address only', async (t) => {
  const other = await startBroker(['--policyApiPort', '0', '--policyApiHost', '127.0.0.2', '--logLevel', 'info']);
  t.teardown(() => other.stop());
  const port = policyPortOf(other);
  t.equal((await call(`http://127.0.0.2:${port}`, 'GET', '/policy')).status, 200);
  const elsewhere = await call(`http://127.0.0.1:${port}`, 'GET', '/policy').then(
    (r) => r.status,
    () => -1,
  );
  t.equal(elsewhere, -1, 'nothing listens on 127.0.0.1 at that port');
});

t.test('a policy port that cannot be bound stops the start-up with status 1', async (t) => {
  const taken = Number(new URL(pap).port);
  const r = await runBroker(['--port', '0', '--policyApiPort', String(taken), '--logLevel', 'info']);
  t.equal(r.code, 1);
  t.match(r.stdout, /the policy API cannot start/);
});
