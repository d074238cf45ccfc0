// Context source registration subscriptions (CIM 009 v1.8.1 §5.11, §6.12, §6.13): CRUD and its refusals, and the
// notifications about registrations: at creation (newlyMatching), on a registration created, updated or deleted
// (newlyMatching, updated, noLongerMatching), counted on the subscription; none while it is paused.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { startMockSource, type MockSource } from './helpers/mock-source.js';

const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const S = `${NGSI}/csourceSubscriptions`;
const R = `${NGSI}/csourceRegistrations`;
let broker: Broker;
let receiver: MockSource;
t.before(async () => {
  broker = await startBroker();
  receiver = await startMockSource(() => ({ status: 204 }));
});
t.teardown(async () => {
  await broker.stop();
  await receiver.stop();
});

let n = 0;
const sub = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: `urn:ngsi-ld:Subscription:cs${++n}`,
  type: 'Subscription',
  entities: [{ type: 'Building' }],
  notification: { endpoint: { uri: `${receiver.url}/notify` } },
  ...extra,
});
const reg = (id: string, type = 'Building', extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  id,
  type: 'ContextSourceRegistration',
  information: [{ entities: [{ type }] }],
  endpoint: 'http://127.0.0.1:9',
  ...extra,
});

/** The notifications the receiver got for a subscription, once there are `count` (or after two seconds). */
async function notificationsOf(subId: string, count: number): Promise<Array<Record<string, any>>> {
  for (let i = 0; i < 100; i++) {
    const got = receiver.received.map((r) => JSON.parse(r.body) as Record<string, any>).filter((b) => b.subscriptionId === subId);
    if (got.length >= count) return got;
    await new Promise((r) => setTimeout(r, 20));
  }
  return receiver.received.map((r) => JSON.parse(r.body) as Record<string, any>).filter((b) => b.subscriptionId === subId);
}

t.test('create, retrieve, query, update and delete', async (t) => {
  const body = sub({ subscriptionName: 'watch buildings' });
  const c = await call(broker, 'POST', S, { body });
  t.equal(c.status, 201, c.text);
  t.equal(c.headers.get('location'), `${S}/${body.id as string}`);
  const g = await call(broker, 'GET', `${S}/${body.id as string}`);
  t.equal(g.status, 200);
  t.equal(g.json.subscriptionName, 'watch buildings');
  t.same(g.json.entities, [{ type: 'Building' }]);
  t.equal(g.json.status, 'active');
  const second = sub();
  t.equal((await call(broker, 'POST', S, { body: second })).status, 201);
  const q = await call(broker, 'GET', `${S}?limit=1&count=true`);
  t.equal(q.json.length, 1);
  t.equal(q.headers.get('ngsild-results-count'), '2');
  t.equal((await call(broker, 'PATCH', `${S}/${body.id as string}`, { body: { isActive: false } })).status, 204);
  t.equal((await call(broker, 'GET', `${S}/${body.id as string}`)).json.status, 'paused');
  t.equal((await call(broker, 'POST', S, { body })).status, 409, 'the same id twice');
  t.equal((await call(broker, 'DELETE', `${S}/${body.id as string}`)).status, 204);
  t.equal((await call(broker, 'GET', `${S}/${body.id as string}`)).status, 404);
  t.equal((await call(broker, 'DELETE', `${S}/${second.id as string}`)).status, 204);
});

t.test('bad input: 400 naming what is wrong, 404 for an unknown one, nothing kept', async (t) => {
  for (const [why, body] of [
    ['no notification', { id: 'urn:x:1', type: 'Subscription', entities: [{ type: 'B' }] }],
    ['wrong type', sub({ type: 'CsourceSubscription' })],
    ['bad q', sub({ q: 'a==' })],
    ['empty watchedAttributes', sub({ watchedAttributes: [] })],
    ['expired', sub({ expiresAt: '2000-01-01T00:00:00Z' })],
  ] as const) {
    const r = await call(broker, 'POST', S, { body });
    t.equal(r.status, 400, `${why}: ${r.text}`);
    t.equal(r.json.type, `${ERR}BadRequestData`);
  }
  t.equal((await call(broker, 'GET', `${S}/not-a-uri`)).status, 400);
  t.equal((await call(broker, 'GET', `${S}/urn:ngsi-ld:Subscription:none`)).status, 404);
  t.equal((await call(broker, 'PATCH', `${S}/urn:ngsi-ld:Subscription:none`, { body: { isActive: true } })).status, 404);
  t.equal((await call(broker, 'DELETE', `${S}/urn:ngsi-ld:Subscription:none`)).status, 404);
  t.equal((await call(broker, 'GET', `${S}?limit=x`)).status, 400);
  t.equal((await call(broker, 'GET', `${S}?offset=-1`)).status, 400);
  t.same((await call(broker, 'GET', S)).json, [], 'nothing was kept');
});

t.test('notifications: newlyMatching at creation and on a new registration, updated, noLongerMatching', async (t) => {
  const type = `House${n}`;
  const r1 = `urn:ngsi-ld:ContextSourceRegistration:cs-${n}-1`;
  t.equal((await call(broker, 'POST', R, { body: reg(r1, type) })).status, 201);
  const s = sub({ entities: [{ type }] });
  t.equal((await call(broker, 'POST', S, { body: s })).status, 201);
  const first = await notificationsOf(s.id as string, 1);
  t.equal(first[0]?.type, 'ContextSourceNotification');
  t.equal(first[0]?.triggerReason, 'newlyMatching');
  t.same(
    first[0]?.data.map((d: { id: string }) => d.id),
    [r1],
  );
  t.same(first[0]?.data[0].information, [{ entities: [{ type }] }], 'names compacted with the subscription @context');
  const r2 = `urn:ngsi-ld:ContextSourceRegistration:cs-${n}-2`;
  t.equal((await call(broker, 'POST', R, { body: reg(r2, type) })).status, 201);
  t.equal((await call(broker, 'POST', R, { body: reg(`${r2}-other`, 'Elsewhere') })).status, 201);
  t.equal((await call(broker, 'PATCH', `${R}/${r1}`, { body: { registrationName: 'renamed' } })).status, 204);
  t.equal((await call(broker, 'PATCH', `${R}/${r2}`, { body: { information: [{ entities: [{ type: 'Elsewhere' }] }] } })).status, 204);
  t.equal((await call(broker, 'DELETE', `${R}/${r1}`)).status, 204);
  const all = await notificationsOf(s.id as string, 5);
  t.same(
    all.map((x) => [x.triggerReason, x.data[0].id]),
    [
      ['newlyMatching', r1],
      ['newlyMatching', r2],
      ['updated', r1],
      ['noLongerMatching', r2],
      ['noLongerMatching', r1],
    ],
  );
  // The counters follow the receiver: a notification is counted once its answer is back at the notifier.
  const g = await until(
    () => call(broker, 'GET', `${S}/${s.id as string}`),
    (g) => g.json.notification.timesSent >= 5,
  );
  t.equal(g.json.notification.timesSent, 5);
  t.equal(g.json.notification.status, 'ok');
  t.ok(g.json.notification.lastSuccess);
  await call(broker, 'DELETE', `${R}/${r2}`);
  await call(broker, 'DELETE', `${R}/${r2}-other`);
});

t.test('a notification carries the RegistrationInfo elements the subscription selects', async (t) => {
  const type = `Depot${++n}`;
  const s = sub({ entities: [{ type }] });
  t.equal((await call(broker, 'POST', S, { body: s })).status, 201);
  const id = `urn:ngsi-ld:ContextSourceRegistration:cs-${n}-parts`;
  const body = reg(id, type, { information: [{ entities: [{ type: 'Bus' }] }, { entities: [{ type }], propertyNames: ['spots'] }] });
  t.equal((await call(broker, 'POST', R, { body })).status, 201);
  // §5.11.7: rather than the original registration, the information relevant to the subscription.
  const [created] = await notificationsOf(s.id as string, 1);
  t.same(created?.data[0].information, [{ entities: [{ type }], propertyNames: ['spots'] }], 'the matching element only');
  t.equal((await call(broker, 'PATCH', `${R}/${id}`, { body: { information: [{ entities: [{ type: 'Bus' }] }] } })).status, 204);
  const gone = (await notificationsOf(s.id as string, 2))[1];
  t.equal(gone?.triggerReason, 'noLongerMatching');
  t.same(gone?.data[0].information, [{ entities: [{ type }], propertyNames: ['spots'] }], 'no longer matching: as it matched');
  await call(broker, 'DELETE', `${R}/${id}`);
  await call(broker, 'DELETE', `${S}/${s.id as string}`);
});

t.test('a paused subscription is not notified; an unreachable receiver is counted as failed', async (t) => {
  const type = `Barn${n}`;
  const paused = sub({ entities: [{ type }], isActive: false });
  const dead = sub({ entities: [{ type }], notification: { endpoint: { uri: 'http://127.0.0.1:9/notify' } } });
  t.equal((await call(broker, 'POST', S, { body: paused })).status, 201);
  t.equal((await call(broker, 'POST', S, { body: dead })).status, 201);
  const r = `urn:ngsi-ld:ContextSourceRegistration:barn${n}`;
  t.equal((await call(broker, 'POST', R, { body: reg(r, type) })).status, 201);
  let failed: Record<string, any> | undefined;
  for (let i = 0; i < 100 && failed?.notification?.timesFailed !== 1; i++) {
    failed = (await call(broker, 'GET', `${S}/${dead.id as string}`)).json;
    await new Promise((res) => setTimeout(res, 20));
  }
  t.equal(failed?.notification.status, 'failed');
  t.ok(failed?.notification.lastFailure);
  t.same(await notificationsOf(paused.id as string, 0), [], 'the paused one got nothing');
  await call(broker, 'DELETE', `${R}/${r}`);
});

t.test('an update is told the registrations it matches now and did not before; no notificationTrigger is shown', async (t) => {
  const k = ++n;
  const r1 = `urn:ngsi-ld:ContextSourceRegistration:upd-${k}-car`;
  const r2 = `urn:ngsi-ld:ContextSourceRegistration:upd-${k}-bus`;
  t.equal((await call(broker, 'POST', R, { body: reg(r1, `Car${k}`) })).status, 201);
  t.equal((await call(broker, 'POST', R, { body: reg(r2, `Bus${k}`) })).status, 201);
  const s = sub({ entities: [{ type: `Tram${k}` }] });
  t.equal((await call(broker, 'POST', S, { body: s })).status, 201);
  t.equal((await call(broker, 'GET', `${S}/${s.id as string}`)).json.notificationTrigger, undefined);
  t.equal((await call(broker, 'PATCH', `${S}/${s.id as string}`, { body: { entities: [{ type: `Car${k}` }] } })).status, 204);
  t.equal(
    (await call(broker, 'PATCH', `${S}/${s.id as string}`, { body: { entities: [{ type: `Car${k}` }, { type: `Bus${k}` }] } })).status,
    204,
  );
  const got = await notificationsOf(s.id as string, 2);
  t.same(
    got.map((x) => [x.triggerReason, x.data.map((d: { id: string }) => d.id)]),
    [
      ['newlyMatching', [r1]],
      ['newlyMatching', [r2]],
    ],
  );
  await call(broker, 'DELETE', `${R}/${r1}`);
  await call(broker, 'DELETE', `${R}/${r2}`);
});

t.test('timeInterval: told at creation, then every interval about the registrations it matches; not after it is deleted', async (t) => {
  const k = ++n;
  const r1 = `urn:ngsi-ld:ContextSourceRegistration:per-${k}`;
  t.equal((await call(broker, 'POST', R, { body: reg(r1, `Boat${k}`) })).status, 201);
  const s = sub({ entities: [{ type: `Boat${k}` }], timeInterval: 1 });
  t.equal((await call(broker, 'POST', S, { body: s })).status, 201);
  const got = await until(
    async () => await notificationsOf(s.id as string, 0),
    (x) => x.length >= 3,
  );
  t.same(
    got.slice(0, 3).map((x) => [x.triggerReason, x.data.map((d: { id: string }) => d.id)]),
    [
      ['newlyMatching', [r1]],
      ['updated', [r1]],
      ['updated', [r1]],
    ],
    'the first at creation, then each second the registrations as they are',
  );
  // Counted once each answer is back at the notifier, a moment after the receiver has the notification.
  const g = await until(
    () => call(broker, 'GET', `${S}/${s.id as string}`),
    (g) => g.json.notification.timesSent >= 3,
  );
  t.ok(g.json.notification.timesSent >= 3, `counted: ${g.json.notification.timesSent}`);
  t.equal(g.json.timeInterval, 1);
  t.equal((await call(broker, 'DELETE', `${S}/${s.id as string}`)).status, 204);
  const atDelete = (await notificationsOf(s.id as string, 0)).length;
  await new Promise((r) => setTimeout(r, 2500));
  t.ok(
    (await notificationsOf(s.id as string, 0)).length <= atDelete + 1,
    'no periodic notification after the delete (one may have been on its way)',
  );
  await call(broker, 'DELETE', `${R}/${r1}`);
});

t.test(
  'timeInterval: a registration change is not told at once; a paused one is not told; a PATCH to isActive false stops it',
  async (t) => {
    const k = ++n;
    const s = sub({ entities: [{ type: `Kayak${k}` }], timeInterval: 3600 });
    t.equal((await call(broker, 'POST', S, { body: s })).status, 201);
    const r1 = `urn:ngsi-ld:ContextSourceRegistration:per-${k}`;
    t.equal((await call(broker, 'POST', R, { body: reg(r1, `Kayak${k}`) })).status, 201);
    // A non-periodic witness created after it, told of the same registration change: once it has its notification,
    // the periodic one had its chance.
    const w = sub({ entities: [{ type: `Kayak${k}` }] });
    t.equal((await call(broker, 'POST', S, { body: w })).status, 201);
    t.equal((await call(broker, 'PATCH', `${R}/${r1}`, { body: { description: 'changed' } })).status, 204);
    const witness = await notificationsOf(w.id as string, 2);
    t.equal(witness.length, 2, 'the witness was told at creation and of the change');
    t.same(await notificationsOf(s.id as string, 0), [], 'the periodic one (an hour) was told nothing yet');

    const p = sub({ entities: [{ type: `Kayak${k}` }], timeInterval: 1 });
    t.equal((await call(broker, 'POST', S, { body: p })).status, 201);
    await notificationsOf(p.id as string, 2);
    t.equal((await call(broker, 'PATCH', `${S}/${p.id as string}`, { body: { isActive: false } })).status, 204);
    const atPause = (await notificationsOf(p.id as string, 0)).length;
    await new Promise((r) => setTimeout(r, 2500));
    t.ok((await notificationsOf(p.id as string, 0)).length <= atPause + 1, 'paused: no more (one may have been on its way)');
    for (const id of [s.id, w.id, p.id]) await call(broker, 'DELETE', `${S}/${id as string}`);
    await call(broker, 'DELETE', `${R}/${r1}`);
  },
);

/** Waits (at most ~6 s) until `test` holds of what `read` gives; the last value read. */
async function until<T>(read: () => Promise<T>, test: (v: T) => boolean): Promise<T> {
  let v = await read();
  for (let i = 0; i < 120 && !test(v); i++) {
    await new Promise((r) => setTimeout(r, 50));
    v = await read();
  }
  return v;
}
