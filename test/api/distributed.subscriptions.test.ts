// Subordinate subscriptions (CIM 009 v1.8.1 §4.3.6, §5.8 distributed behaviour): a subscription on broker A over a
// type registered from broker B is made again on B, notifying A, which relays to the subscriber in the original's
// format; it follows the original (update, delete) and the registration (appears, goes); a dead source never holds
// up the original and is tried again.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { startMockSource, type MockSource, type MockAnswer, type Received } from './helpers/mock-source.js';

let a: Broker;
let b: Broker;
let receiver: MockSource;
t.before(async () => {
  [a, b] = await Promise.all([startBroker(['--contextSourceAlias', 'broker-a']), startBroker(['--contextSourceAlias', 'broker-b'])]);
  receiver = await startMockSource(() => ({ status: 204 }));
});
t.teardown(async () => {
  await Promise.all([a.stop(), b.stop(), receiver.stop()]);
});

const E = `${NGSI}/entities`;
const S = `${NGSI}/subscriptions`;
const R = `${NGSI}/csourceRegistrations`;
let n = 0;
const uid = (kind: string): string => `urn:ngsi-ld:${kind}:${process.pid}-${++n}`;

async function register(on: Broker, endpoint: string, extra: Record<string, unknown>): Promise<string> {
  const id = uid('ContextSourceRegistration');
  const r = await call(on, 'POST', R, { body: { id, type: 'ContextSourceRegistration', endpoint, ...extra } });
  if (r.status !== 201) throw new Error(`registration: ${r.status} ${r.text}`);
  return id;
}

async function subscribe(on: Broker, type: string, extra: Record<string, unknown> = {}): Promise<string> {
  const id = uid('Subscription');
  const r = await call(on, 'POST', S, {
    body: { id, type: 'Subscription', entities: [{ type }], notification: { endpoint: { uri: `${receiver.url}/notify` } }, ...extra },
  });
  if (r.status !== 201) throw new Error(`subscription: ${r.status} ${r.text}`);
  return id;
}

/** Waits (at most ~8 s) until `test` holds of what `read` gives; the last value read. */
async function until<T>(read: () => Promise<T>, test: (v: T) => boolean): Promise<T> {
  let v = await read();
  for (let i = 0; i < 160 && !test(v); i++) {
    await new Promise((r) => setTimeout(r, 50));
    v = await read();
  }
  return v;
}

/** The subordinate subscriptions on a broker (those made by another broker for one of its subscriptions). */
async function subordinatesOn(on: Broker): Promise<Array<Record<string, any>>> {
  const r = await call(on, 'GET', `${S}?limit=1000`);
  return (r.json as Array<Record<string, any>>).filter((s) => String(s.id).startsWith('urn:ngsi-ld:Subscription:subordinate:'));
}

const notified = (subId: string): Array<Record<string, any>> =>
  receiver.received.map((r) => JSON.parse(r.body) as Record<string, any>).filter((x) => x.subscriptionId === subId);

t.test('an entity changed on B is notified to the subscriber of A, in the format of the subscription made on A', async (t) => {
  const type = `Car${++n}`;
  const reg = await register(a, b.url, { information: [{ entities: [{ type }] }] });
  const sub = await subscribe(a, type, { notification: { format: 'keyValues', endpoint: { uri: `${receiver.url}/notify` } } });
  const made = await until(
    () => subordinatesOn(b),
    (s) => s.length === 1,
  );
  t.equal(made.length, 1, 'one subscription made on B');
  t.same(made[0]!.entities, [{ type }]);
  t.match(made[0]!.notification.endpoint.uri, /\/ngsi-ld\/v1\/subordinateNotifications\/[0-9a-f-]{36}$/);
  const id = uid('Car');
  const c = await call(b, 'POST', `${E}?local=true`, { body: { id, type, speed: { type: 'Property', value: 42 } } });
  t.equal(c.status, 201, c.text);
  const got = await until(
    async () => notified(sub),
    (x) => x.length > 0,
  );
  t.equal(got.length, 1, 'one notification relayed');
  t.equal(got[0]!.type, 'Notification');
  t.same(got[0]!.data, [{ id, type, speed: 42 }], 'keyValues, as the original asks');
  await call(a, 'DELETE', `${S}/${sub}`);
  await call(a, 'DELETE', `${R}/${reg}`);
});

t.test("a registration with a tenant: the subordinate is made in B's tenant, whose notifications A relays", async (t) => {
  const type = `Van${++n}`;
  const reg = await register(a, b.url, { information: [{ entities: [{ type }] }], tenant: 'district' });
  const sub = await subscribe(a, type);
  const inTenant = { headers: { 'ngsild-tenant': 'district' } };
  const made = await until(
    async () => (await call(b, 'GET', `${S}?limit=1000`, inTenant)).json as Array<Record<string, any>>,
    (s) => Array.isArray(s) && s.some((x) => x.entities?.[0]?.type === type),
  );
  t.ok(Array.isArray(made) && made.some((x) => x.entities?.[0]?.type === type), "made in B's tenant");
  const id = uid('Van');
  const c = await call(b, 'POST', `${E}?local=true`, { body: { id, type, speed: { type: 'Property', value: 3 } }, ...inTenant });
  t.equal(c.status, 201, c.text);
  const got = await until(
    async () => notified(sub),
    (x) => x.length > 0,
  );
  t.equal(got[0]?.data?.[0]?.id, id, 'relayed although this broker has no tenant of that name');
  await call(a, 'DELETE', `${S}/${sub}`);
  await call(a, 'DELETE', `${R}/${reg}`);
});

t.test('an update of the original is made on B too; its delete deletes the subordinate', async (t) => {
  const type = `Bus${++n}`;
  const reg = await register(a, b.url, { information: [{ entities: [{ type }] }] });
  const sub = await subscribe(a, type);
  await until(
    () => subordinatesOn(b),
    (s) => s.some((x) => x.entities?.[0]?.type === type),
  );
  const p = await call(a, 'PATCH', `${S}/${sub}`, { body: { watchedAttributes: ['speed'] } });
  t.equal(p.status, 204, p.text);
  const updated = await until(
    () => subordinatesOn(b),
    (s) => s.some((x) => x.entities?.[0]?.type === type && x.watchedAttributes?.[0] === 'speed'),
  );
  t.ok(
    updated.some((x) => x.entities?.[0]?.type === type && x.watchedAttributes?.[0] === 'speed'),
    'the watchedAttributes of the update reached B',
  );
  t.equal((await call(a, 'DELETE', `${S}/${sub}`)).status, 204);
  const left = await until(
    () => subordinatesOn(b),
    (s) => !s.some((x) => x.entities?.[0]?.type === type),
  );
  t.notOk(
    left.some((x) => x.entities?.[0]?.type === type),
    'deleted on B with the original',
  );
  await call(a, 'DELETE', `${R}/${reg}`);
});

t.test('a registration appearing after the subscription makes the subordinate; the registration gone deletes it', async (t) => {
  const type = `Tram${++n}`;
  const sub = await subscribe(a, type);
  const reg = await register(a, b.url, { information: [{ entities: [{ type }] }] });
  const made = await until(
    () => subordinatesOn(b),
    (s) => s.some((x) => x.entities?.[0]?.type === type),
  );
  t.ok(
    made.some((x) => x.entities?.[0]?.type === type),
    'made when the registration appeared',
  );
  await call(a, 'DELETE', `${R}/${reg}`);
  const left = await until(
    () => subordinatesOn(b),
    (s) => !s.some((x) => x.entities?.[0]?.type === type),
  );
  t.notOk(
    left.some((x) => x.entities?.[0]?.type === type),
    'deleted with the registration',
  );
  await call(a, 'DELETE', `${S}/${sub}`);
});

t.test('registrations that do not offer createSubscription, auxiliary ones and unrelated types get none', async (t) => {
  const type = `Bike${++n}`;
  const regs = [
    await register(a, b.url, { information: [{ entities: [{ type }] }], operations: ['retrieveOps'] }),
    await register(a, b.url, { information: [{ entities: [{ type }] }], mode: 'auxiliary' }),
    await register(a, b.url, { information: [{ entities: [{ type: `Other${n}` }] }] }),
  ];
  const sub = await subscribe(a, type);
  // A registration that does offer it, made last: once its subordinate is there, the others had their turn before it.
  const witness = `Witness${n}`;
  const wreg = await register(a, b.url, { information: [{ entities: [{ type: witness }] }] });
  const wsub = await subscribe(a, witness);
  const all = await until(
    () => subordinatesOn(b),
    (s) => s.some((x) => x.entities?.[0]?.type === witness),
  );
  t.ok(all.some((x) => x.entities?.[0]?.type === witness));
  t.notOk(
    all.some((x) => x.entities?.[0]?.type === type),
    'none for the subscription',
  );
  for (const r of [...regs, wreg]) await call(a, 'DELETE', `${R}/${r}`);
  for (const s of [sub, wsub]) await call(a, 'DELETE', `${S}/${s}`);
});

t.test('a dead source never holds up the original; a source failing at first is tried again', async (t) => {
  const type = `Ferry${++n}`;
  const dead = await register(a, 'http://127.0.0.1:9', { information: [{ entities: [{ type }] }] });
  const sub = await subscribe(a, type);
  const g = await call(a, 'GET', `${S}/${sub}`);
  t.equal(g.status, 200, 'the original is made and shown');
  t.equal(g.json.status, 'active');
  // Notifications of A's own entities go on.
  const local = uid('Ferry');
  await call(a, 'POST', `${E}?local=true`, { body: { id: local, type, speed: { type: 'Property', value: 1 } } });
  const got = await until(
    async () => notified(sub),
    (x) => x.length > 0,
  );
  t.equal(got[0]?.data?.[0]?.id, local, "A's own entity notified");
  await call(a, 'DELETE', `${R}/${dead}`);

  let calls = 0;
  const flaky: MockSource = await startMockSource((r: Received): MockAnswer => {
    if (r.method === 'POST' && r.url === '/ngsi-ld/v1/subscriptions') return ++calls === 1 ? { status: 503 } : { status: 201 };
    return { status: 204 };
  });
  t.teardown(() => flaky.stop());
  await register(a, flaky.url, { information: [{ entities: [{ type }] }] });
  const posts = await until(
    async () => flaky.received.filter((r) => r.method === 'POST'),
    (x) => x.length >= 2,
  );
  t.equal(posts.length, 2, 'made on the second try');
  const body = JSON.parse(posts[1]!.body) as Record<string, any>;
  t.match(body.id, /^urn:ngsi-ld:Subscription:subordinate:/);
  t.same(body.notification.format, 'normalized');
  await call(a, 'DELETE', `${S}/${sub}`);
  const del = await until(
    async () => flaky.received.filter((r) => r.method === 'DELETE'),
    (x) => x.length > 0,
  );
  t.equal(del[0]?.url, `/ngsi-ld/v1/subscriptions/${encodeURIComponent(body.id as string)}`.replace(/%3A/g, ':'), 'deleted on the source');
});

t.test('the relay route refuses what no subordinate subscription of this broker sent', async (t) => {
  const unknown = await call(a, 'POST', `${NGSI}/subordinateNotifications/00000000-0000-4000-8000-000000000000`, {
    body: { id: 'urn:x', type: 'Notification', subscriptionId: 'urn:ngsi-ld:Subscription:subordinate:x', data: [] },
  });
  t.equal(unknown.status, 404, unknown.text);
  t.equal(unknown.json.type, 'https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound');
  const bad = await call(a, 'POST', `${NGSI}/subordinateNotifications/not-a-key`, { body: { data: [] } });
  t.equal(bad.status, 404);
  const notJson = await call(a, 'POST', `${NGSI}/subordinateNotifications/00000000-0000-4000-8000-000000000000`, {
    body: '[1]',
    headers: { 'content-type': 'application/json' },
  });
  t.ok(notJson.status === 400 || notJson.status === 404, `${notJson.status}`);
});

t.test('after a restart on --dbDir the subordinate is kept, not made twice, and follows a new --brokerUrl', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ldb-subord-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const type = `Glider${++n}`;
  let a1 = await startBroker(['--dbDir', dir, '--brokerUrl', 'http://127.0.0.1:1']);
  await register(a1, b.url, { information: [{ entities: [{ type }] }] });
  const sub = await subscribe(a1, type);
  const ofType = async (): Promise<Array<Record<string, any>>> => (await subordinatesOn(b)).filter((x) => x.entities?.[0]?.type === type);
  const first = await until(ofType, (s) => s.length === 1);
  t.match(first[0]?.notification.endpoint.uri, /^http:\/\/127\.0\.0\.1:1\/ngsi-ld\/v1\/subordinateNotifications\//);
  await a1.stop();
  a1 = await startBroker(['--dbDir', dir, '--brokerUrl', 'http://127.0.0.1:2']);
  t.teardown(() => a1.stop());
  const moved = await until(ofType, (s) => s.length === 1 && String(s[0]!.notification.endpoint.uri).startsWith('http://127.0.0.1:2/'));
  t.equal(moved.length, 1, 'one subordinate, not a second one');
  t.equal(moved[0]?.id, first[0]?.id, 'the same one');
  t.match(
    moved[0]?.notification.endpoint.uri,
    /^http:\/\/127\.0\.0\.1:2\/ngsi-ld\/v1\/subordinateNotifications\//,
    'moved to the new address',
  );
  await call(a1, 'DELETE', `${S}/${sub}`);
  t.same(await until(ofType, (s) => s.length === 0), [], 'deleted with the original');
});
