// Distributed entity writes (CIM 009 v1.8.1 §4.3.6, §5.6): inclusive sources get the write too, exclusive and
// redirect ones what they register instead of the broker, auxiliary ones nothing; a part that fails makes a 207
// naming it; Via on forwarded writes and brokers registered on each other.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { startMockSource } from './helpers/mock-source.js';

let a: Broker;
let b: Broker;
t.before(async () => {
  [a, b] = await Promise.all([
    startBroker(['--contextSourceAlias', 'wa', '--forwardTimeout', '2000']),
    startBroker(['--contextSourceAlias', 'wb']),
  ]);
});
t.teardown(async () => {
  await Promise.all([a.stop(), b.stop()]);
});

const E = `${NGSI}/entities`;
const R = `${NGSI}/csourceRegistrations`;
let n = 0;
const uid = (kind: string): string => `urn:ngsi-ld:${kind}:w${process.pid}-${++n}`;
async function register(on: Broker, endpoint: string, extra: Record<string, unknown>): Promise<string> {
  const id = uid('ContextSourceRegistration');
  const r = await call(on, 'POST', R, { body: { id, type: 'ContextSourceRegistration', endpoint, ...extra } });
  if (r.status !== 201) throw new Error(`registration: ${r.status} ${r.text}`);
  return id;
}
const unregister = async (on: Broker, id: string): Promise<void> => {
  await call(on, 'DELETE', `${R}/${id}`);
};
const local = (on: Broker, id: string) => call(on, 'GET', `${E}/${id}?local=true`);
const prop = (value: unknown): Record<string, unknown> => ({ type: 'Property', value });

t.test('inclusive: create, update, append, attribute writes and delete reach the broker and the source', async (t) => {
  const type = `Inc${n}`;
  const reg = await register(a, b.url, { information: [{ entities: [{ type }] }] });
  const id = uid('Inc');
  const c = await call(a, 'POST', E, { body: { id, type, p: prop(1) } });
  t.equal(c.status, 201, c.text);
  t.equal(c.headers.get('location'), `${E}/${id}`);
  t.equal((await local(a, id)).json.p.value, 1);
  t.equal((await local(b, id)).json.p.value, 1);
  t.equal((await call(a, 'POST', `${E}/${id}/attrs`, { body: { q: prop(2) } })).status, 204);
  t.equal((await call(a, 'PATCH', `${E}/${id}/attrs/p`, { body: { value: 5 } })).status, 204);
  t.equal((await local(b, id)).json.q.value, 2);
  t.equal((await local(b, id)).json.p.value, 5);
  t.equal((await call(a, 'DELETE', `${E}/${id}/attrs/q`)).status, 204);
  t.equal((await local(b, id)).json.q, undefined);
  t.equal((await call(a, 'DELETE', `${E}/${id}`)).status, 204);
  t.equal((await local(a, id)).status, 404);
  t.equal((await local(b, id)).status, 404);
  await unregister(a, reg);
});

t.test('a part that fails makes a 207: the local 409 of an entity that exists, a source 404', async (t) => {
  const type = `Part${n}`;
  const id = uid('Part');
  t.equal((await call(a, 'POST', `${E}?local=true`, { body: { id, type } })).status, 201);
  const reg = await register(a, b.url, { information: [{ entities: [{ type, id }] }] });
  const c = await call(a, 'POST', E, { body: { id, type, p: prop(1) } });
  t.equal(c.status, 207, c.text);
  t.same(c.json.success, [id]);
  t.equal(c.json.errors.length, 1);
  t.equal(c.json.errors[0].error.status, 409, 'the local create: AlreadyExists');
  t.equal(c.json.errors[0].registrationId, undefined);
  t.equal((await local(b, id)).status, 200, 'the source has it');
  t.equal((await call(b, 'DELETE', `${E}/${id}`)).status, 204);
  const d = await call(a, 'DELETE', `${E}/${id}`);
  t.equal(d.status, 207, d.text);
  t.equal(d.json.errors[0].error.status, 404);
  t.equal(d.json.errors[0].registrationId, reg);
  t.equal((await local(a, id)).status, 404, 'the local part is deleted');
  await unregister(a, reg);
});

t.test('exclusive: the registered attributes go to the source only; redirect: the whole entity; auxiliary: nothing', async (t) => {
  const type = `Ex${n}`;
  const id = uid('Ex');
  const reg = await register(a, b.url, { mode: 'exclusive', information: [{ entities: [{ type, id }], propertyNames: ['speed'] }] });
  const c = await call(a, 'POST', E, { body: { id, type, speed: prop(80), brand: prop('x') } });
  t.equal(c.status, 201, c.text);
  t.same(Object.keys((await local(a, id)).json).sort(), ['brand', 'id', 'type']);
  t.same(Object.keys((await local(b, id)).json).sort(), ['id', 'speed', 'type']);
  t.equal((await call(a, 'PATCH', `${E}/${id}/attrs`, { body: { speed: prop(90) } })).status, 204, 'only the source is written');
  t.equal((await local(b, id)).json.speed.value, 90);
  t.equal((await call(a, 'GET', `${E}/${id}`)).json.speed.value, 90, 'and read back through the broker');
  await unregister(a, reg);

  const rid = uid('Red');
  const redType = `Red${n}`;
  const red = await register(a, b.url, { mode: 'redirect', information: [{ entities: [{ type: redType }] }] });
  t.equal((await call(a, 'POST', E, { body: { id: rid, type: redType, p: prop(1) } })).status, 201);
  t.equal((await local(a, rid)).status, 404, 'a redirect registration keeps nothing here');
  t.equal((await local(b, rid)).status, 200);
  await unregister(a, red);

  const aid = uid('Aux');
  const auxType = `Aux${n}`;
  const aux = await register(a, b.url, { mode: 'auxiliary', information: [{ entities: [{ type: auxType }] }] });
  t.equal((await call(a, 'POST', E, { body: { id: aid, type: auxType } })).status, 201);
  t.equal((await local(b, aid)).status, 404, 'an auxiliary source takes no writes');
  await unregister(a, aux);
});

t.test('a source that cannot be reached or is too slow: 207 with 503 or 504 for it; the local part is written', async (t) => {
  const type = `Down${n}`;
  const mock = await startMockSource(() => ({ status: 200, hang: true }));
  t.teardown(() => mock.stop());
  const dead = await register(a, 'http://127.0.0.1:9', { information: [{ entities: [{ type }] }] });
  const id = uid('Down');
  const c = await call(a, 'POST', E, { body: { id, type } });
  t.equal(c.status, 207, c.text);
  t.equal(c.json.errors[0].error.status, 503);
  t.equal((await local(a, id)).status, 200);
  await unregister(a, dead);
  const slow = await register(a, mock.url, { management: { timeout: 200 }, information: [{ entities: [{ type }] }] });
  const d = await call(a, 'DELETE', `${E}/${id}`);
  t.equal(d.status, 207, d.text);
  t.equal(d.json.errors[0].error.status, 504);
  t.equal(mock.received[0]?.method, 'DELETE');
  t.match(mock.received[0]?.headers.via, /^1\.1 wa$/);
  await unregister(a, slow);
});

t.test('a write naming this broker in Via is 508; two brokers registered on each other write once each', async (t) => {
  const type = `Mutual${n}`;
  const ab = await register(a, b.url, { information: [{ entities: [{ type }] }] });
  const ba = await register(b, a.url, { information: [{ entities: [{ type }] }] });
  const id = uid('Mutual');
  const loop = await call(a, 'POST', E, { body: { id, type }, headers: { via: '1.1 wa' } });
  t.equal(loop.status, 508, loop.text);
  t.equal((await local(a, id)).status, 404, 'nothing written');
  const c = await call(a, 'POST', E, { body: { id, type, p: prop(1) } });
  t.equal(c.status, 201, c.text);
  t.equal((await local(a, id)).status, 200);
  t.equal((await local(b, id)).status, 200);
  await unregister(a, ab);
  await unregister(b, ba);
});

t.test('bad input is refused before anything is sent', async (t) => {
  const mock = await startMockSource(() => ({ status: 201 }));
  t.teardown(() => mock.stop());
  const reg = await register(a, mock.url, { information: [{ entities: [{ type: 'Bad' }] }] });
  t.equal((await call(a, 'POST', E, { body: { id: 'not a uri', type: 'Bad' } })).status, 400);
  t.equal((await call(a, 'POST', E, { raw: '{oops', headers: { 'content-type': 'application/json' } })).status, 400);
  t.equal((await call(a, 'PATCH', `${E}/nope/attrs`, { body: { p: prop(1) } })).status, 400);
  t.equal(mock.received.length, 0);
  await unregister(a, reg);
});

t.test('batches are split per registration: one request per source, its entries only; the answers merged', async (t) => {
  const k = ++n;
  const type = `Batch${k}`;
  const B = `${NGSI}/entityOperations`;
  const reg = await register(a, b.url, { information: [{ entities: [{ type, idPattern: `^urn:ngsi-ld:Batch:${k}-` }] }] });
  const mine = [`urn:ngsi-ld:Batch:${k}-1`, `urn:ngsi-ld:Batch:${k}-2`];
  const other = `urn:ngsi-ld:Other:${k}`;
  const c = await call(a, 'POST', `${B}/create`, {
    body: [...mine.map((id) => ({ id, type, p: prop(1) })), { id: other, type, p: prop(2) }],
  });
  t.equal(c.status, 201, c.text);
  t.same([...c.json].sort(), [...mine, other].sort());
  for (const id of mine) t.equal((await local(b, id)).status, 200, 'on the source');
  t.equal((await local(b, other)).status, 404, 'an entry no registration covers stays here');
  t.equal((await local(a, other)).status, 200);
  const u = await call(a, 'POST', `${B}/update`, { body: mine.map((id) => ({ id, type, p: prop(7) })) });
  t.equal(u.status, 204, u.text);
  t.equal((await local(b, mine[0]!)).json.p.value, 7);
  t.equal((await call(b, 'DELETE', `${E}/${mine[1]}`)).status, 204);
  const d = await call(a, 'POST', `${B}/delete`, { body: [...mine, other] });
  t.equal(d.status, 207, d.text);
  t.same(
    d.json.errors.map((e: { entityId: string; registrationId?: string; error: { status: number } }) => [
      e.entityId,
      e.registrationId,
      e.error.status,
    ]),
    [[mine[1], reg, 404]],
    'the source had no second entity: its 207 entry names the registration',
  );
  t.same([...d.json.success].sort(), [mine[0], other].sort());
  await unregister(a, reg);
});

t.test('a batch whose source is down: each of its entries fails with 503, the rest is written', async (t) => {
  const mock = await startMockSource(() => ({ status: 201 }));
  t.teardown(() => mock.stop());
  const type = `BatchDown${n}`;
  const ids = [uid('BD'), uid('BD')];
  const sent = await register(a, mock.url, {
    mode: 'exclusive',
    information: [{ entities: ids.map((id) => ({ type, id })), propertyNames: ['speed'] }],
  });
  const dead = await register(a, 'http://127.0.0.1:9', { mode: 'inclusive', information: [{ entities: [{ type }] }] });
  const c = await call(a, 'POST', `${NGSI}/entityOperations/create`, {
    body: ids.map((id) => ({ id, type, speed: prop(1), brand: prop('x') })),
  });
  t.equal(c.status, 207, c.text);
  t.same(
    c.json.errors.map((e: { error: { status: number }; registrationId: string }) => [e.error.status, e.registrationId]),
    [
      [503, dead],
      [503, dead],
    ],
  );
  t.same(c.json.success, [], 'an entry with a part that failed is no success');
  t.equal(mock.received.length, 1, 'one request for both entries');
  t.same(
    JSON.parse(mock.received[0]!.body).map((e: Record<string, unknown>) => Object.keys(e).sort()),
    [
      ['id', 'speed', 'type'],
      ['id', 'speed', 'type'],
    ],
    'the exclusive source gets its attribute only',
  );
  t.same(Object.keys((await local(a, ids[0]!)).json).sort(), ['brand', 'id', 'type']);
  await unregister(a, sent);
  await unregister(a, dead);
});

t.test('a source is sent the path as the route writes it (attrs/ as the spec names it), whatever spelling the client used', async (t) => {
  const mock = await startMockSource(() => ({ status: 204 }));
  t.teardown(() => mock.stop());
  const type = `Path${n}`;
  const reg = await register(a, `${mock.url}/sub/`, { information: [{ entities: [{ type }] }] });
  const id = 'urn:ngsi-ld:Path:a/b';
  // Over the broker's HTTP server (a.url), which hands the path on as the client wrote it.
  t.equal((await call(a.url, 'POST', `${E}/`, { body: { id, type } })).status, 201);
  t.equal(
    (await call(a.url, 'PATCH', `${E}/${encodeURIComponent(id)}/attrs/p/`, { body: { value: 1 } })).status,
    207,
    'the local entity has no p: 404 there',
  );
  // The attributes of an entity as CIM 009 names the resource (§6.6.3.1: `entities/{entityId}/attrs/`), whether the
  // client wrote the slash or not.
  t.equal((await call(a.url, 'POST', `${E}/${encodeURIComponent(id)}/attrs`, { body: { q: { type: 'Property', value: 1 } } })).status, 204);
  t.equal(
    (await call(a.url, 'PATCH', `${E}/${encodeURIComponent(id)}/attrs/`, { body: { q: { type: 'Property', value: 2 } } })).status,
    204,
  );
  t.same(
    mock.received.map((r) => `${r.method} ${r.url}`),
    [
      'POST /sub/ngsi-ld/v1/entities',
      'PATCH /sub/ngsi-ld/v1/entities/urn:ngsi-ld:Path:a%2Fb/attrs/p',
      'POST /sub/ngsi-ld/v1/entities/urn:ngsi-ld:Path:a%2Fb/attrs/',
      'PATCH /sub/ngsi-ld/v1/entities/urn:ngsi-ld:Path:a%2Fb/attrs/',
    ],
  );
  await unregister(a, reg);
});

t.test('purge: run here and on the sources covering its selection; a source that fails makes a 207', async (t) => {
  const type = `Purge${n}`;
  const reg = await register(a, b.url, { information: [{ entities: [{ type }] }] });
  const here = uid('Purge');
  const there = uid('Purge');
  t.equal((await call(a, 'POST', `${E}?local=true`, { body: { id: here, type } })).status, 201);
  t.equal((await call(b, 'POST', `${E}?local=true`, { body: { id: there, type } })).status, 201);
  const p = await call(a, 'DELETE', `${E}?type=${type}`);
  t.equal(p.status, 204, p.text);
  t.equal((await local(a, here)).status, 404);
  t.equal((await local(b, there)).status, 404, 'purged on the source too');
  await unregister(a, reg);
  const dead = await register(a, 'http://127.0.0.1:9', { information: [{ entities: [{ type }] }] });
  t.equal((await call(a, 'POST', `${E}?local=true`, { body: { id: here, type } })).status, 201);
  const f = await call(a, 'DELETE', `${E}?type=${type}`);
  t.equal(f.status, 207, f.text);
  t.same(
    f.json.errors.map((e: { registrationId: string; error: { status: number } }) => [e.registrationId, e.error.status]),
    [[dead, 503]],
  );
  t.equal((await local(a, here)).status, 404, 'the local part is purged');
  t.equal((await call(a, 'DELETE', `${E}`)).status, 400, 'a purge naming nothing is refused before anything is sent');
  await unregister(a, dead);
});

t.test('an application/ld+json batch: each entry is matched with its own @context', async (t) => {
  const mock = await startMockSource(() => ({ status: 201, body: [] }));
  t.teardown(() => mock.stop());
  const context = { LdV: 'https://ex.org/types/LdVehicle' };
  const regId = uid('ContextSourceRegistration');
  const r = await call(a, 'POST', R, {
    body: {
      id: regId,
      type: 'ContextSourceRegistration',
      endpoint: mock.url,
      information: [{ entities: [{ type: 'LdV' }] }],
      '@context': context,
    },
    headers: { 'content-type': 'application/ld+json' },
  });
  t.equal(r.status, 201, r.text);
  const id = uid('LdV');
  const c = await call(a, 'POST', `${NGSI}/entityOperations/create`, {
    body: [{ id, type: 'LdV', '@context': context }],
    headers: { 'content-type': 'application/ld+json' },
  });
  t.equal(c.status, 201, c.text);
  t.equal(mock.received.length, 1, 'the entry reached the source its registration names');
  t.equal(mock.received[0]?.url, '/ngsi-ld/v1/entityOperations/create');
  await unregister(a, regId);
});
