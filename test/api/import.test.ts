// ldbroker-import end to end in this process (seed 001 §2.5, §2.7, importer behaviour 1 to 9): a stream as the
// Orion-LD exporter writes it → the importer on an embdb store on disk → a broker started on the same store →
// counts per type, every entity, subscription and registration equal to the stream, temporal evolutions equal.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { importTarget, importWith } from './helpers/import.js';

import { EX, T0, T1, building, room, tenantRoom, subscriptions, registrations, source } from './helpers/import-source.js';

t.test('a stream imported, then served by a broker on the same store, equals the source', async (t) => {
  const target = importTarget(t);
  const imported = await importWith(target.args, source);
  t.equal(imported.anyRefused, false, imported.err);
  t.equal(imported.line('entities'), 'entities: 3 imported, 0 refused');
  t.equal(imported.line('subscriptions'), 'subscriptions: 3 imported, 0 refused');
  t.equal(imported.line('registrations'), 'registrations: 2 imported, 0 refused');
  t.equal(imported.line('temporal entity events'), 'temporal entity events: 1 imported, 0 refused');
  t.equal(imported.line('temporal instances'), 'temporal instances: 5 imported, 0 refused');
  // The two rooms have no history in the stream: their create's history (an event and one row per instance each).
  t.equal(imported.line('created rows (history)'), 'created rows (history): 6 written, 0 failed');

  const broker: Broker = await startBroker(target.args);
  t.teardown(() => broker.stop());

  // seed 001 behaviour 9: counts per type.
  const types = await call(broker, 'GET', `${NGSI}/types?details=true`);
  t.same(types.json.map((x: { id: string }) => x.id).sort(), [`${EX}Building`, `${EX}Room`, `${EX}Space`]);
  for (const [type, n] of [
    [`${EX}Building`, 1],
    [`${EX}Room`, 1],
    [`${EX}Space`, 1],
  ] as const) {
    const r = await call(broker, 'GET', `${NGSI}/entities?type=${encodeURIComponent(type)}&count=true&limit=0`);
    t.equal(r.headers.get('ngsild-results-count'), String(n), `${type}: ${n}`);
  }
  const tenant = await call(broker, 'GET', `${NGSI}/entities/${tenantRoom.id}?options=sysAttrs`, { headers: { 'NGSILD-Tenant': 'acme' } });
  t.same(tenant.json, tenantRoom, 'the tenant Acme is acme');

  for (const e of [building, room]) {
    const r = await call(broker, 'GET', `${NGSI}/entities/${e.id}?options=sysAttrs`);
    t.equal(r.status, 200);
    t.same(r.json, e, `${e.id} equals its record, system times at every level`);
  }

  const subs = await call(broker, 'GET', `${NGSI}/subscriptions?options=sysAttrs`);
  t.equal(subs.json.length, 3);
  const byId = new Map(subs.json.map((s: { id: string }) => [s.id, s]));
  const s1 = byId.get('urn:ngsi-ld:Subscription:S1') as Record<string, any>;
  const { notification: n1, ...rest1 } = subscriptions[0]!;
  t.match(s1, { ...rest1, status: 'active' });
  t.match(s1.notification, { ...n1, status: 'ok' }, 'counters kept');
  t.equal((byId.get('urn:ngsi-ld:Subscription:S2') as Record<string, unknown>).status, 'paused', 'isActive false kept: paused');
  t.equal((byId.get('urn:ngsi-ld:Subscription:S3') as Record<string, unknown>).status, 'expired', 'status recomputed: expired');

  for (const reg of registrations) {
    const r = await call(broker, 'GET', `${NGSI}/csourceRegistrations/${reg.id}?options=sysAttrs`);
    t.equal(r.status, 200);
    t.match(r.json, reg, `${reg.id} equals its record`);
  }

  // Temporal evolution: every instance with its instanceId and times; the deletion a tombstone of the right type.
  const te = await call(broker, 'GET', `${NGSI}/temporal/entities/${building.id}?options=sysAttrs`);
  t.equal(te.status, 200, te.text);
  const temp = te.json[`${EX}temperature`];
  t.same(
    temp.map((i: Record<string, unknown>) => [i.instanceId, i.value, i.createdAt, i.observedAt]),
    [
      ['urn:ngsi-ld:attribute:instance:b1', 20, T0, '2023-11-14T22:13:00.000Z'],
      ['urn:ngsi-ld:attribute:instance:b2', 21.5, T1, '2023-11-14T22:14:10.250Z'],
    ],
  );
  t.match(te.json[`${EX}speed`], [{ instanceId: 'urn:ngsi-ld:attribute:instance:b3', datasetId: 'urn:ngsi-ld:dataset:gps', value: 12 }]);
  const gone = te.json[`${EX}gone`];
  t.equal(gone.length, 2);
  t.match(gone[1], { type: 'Relationship', object: 'urn:ngsi-ld:null', deletedAt: T1, instanceId: 'urn:ngsi-ld:attribute:instance:b5' });
  t.notOk(te.json[`${EX}name`], 'an entity with history in the stream gets only that history');

  // An entity without history in the stream: the history a create writes, at the instances' own times.
  const tr = await call(broker, 'GET', `${NGSI}/temporal/entities/${room.id}?options=sysAttrs`);
  t.equal(tr.status, 200);
  t.match(tr.json[`${EX}temperature`], [{ value: 19, createdAt: T0 }]);
  t.match(tr.json[`${EX}building`], [{ object: 'urn:ngsi-ld:Building:B1', createdAt: T0 }]);
});

t.test('importing the same stream again refuses every record that went in, and writes nothing', async (t) => {
  const target = importTarget(t);
  t.equal((await importWith(target.args, source)).anyRefused, false);
  const again = await importWith(target.args, source);
  t.equal(again.line('entities'), 'entities: 0 imported, 3 refused');
  t.equal(again.line('subscriptions'), 'subscriptions: 0 imported, 3 refused');
  t.equal(again.line('registrations'), 'registrations: 0 imported, 2 refused');
  // The history is one batch: refused whole on its first instanceId already there.
  t.equal(again.line('temporal entity events'), 'temporal entity events: 0 imported, 1 refused');
  t.equal(again.line('temporal instances'), 'temporal instances: 0 imported, 5 refused');
  t.equal(again.line('created rows (history)'), 'created rows (history): 0 written, 0 failed');
  t.match(again.err, /line 4: entity urn:ngsi-ld:Building:B1 refused: AlreadyExists/);
  t.match(again.err, /subscription urn:ngsi-ld:Subscription:S1 refused: AlreadyExists/);
  t.match(again.err, /registration urn:ngsi-ld:ContextSourceRegistration:REG1 refused: AlreadyExists/);
  t.match(again.err, /refused with its batch \(lines 10 to 15\)/);

  const broker = await startBroker(target.args);
  t.teardown(() => broker.stop());
  const te = await call(broker, 'GET', `${NGSI}/temporal/entities/${building.id}`);
  t.equal(te.json[`${EX}temperature`].length, 2, 'no instance twice');
  const r = await call(broker, 'GET', `${NGSI}/entities/${building.id}?options=sysAttrs`);
  t.same(r.json, building, 'never overwritten');
});
