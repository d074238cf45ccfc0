// ldbroker-import into --database docdb (FerretDB, test/services/ferretdb.sh) with --troe none: the current state of
// the stream (entities of every attribute type, two tenants, subscriptions with their counters, registrations), then
// a broker on the same database answers as the source; the history records are refused (no history store) and named.
import t from 'tap';
import { startBroker, call, NGSI } from './helpers/broker.js';
import { importWith } from './helpers/import.js';
import { docdbArgs, dropDatabases, freshDbName } from './helpers/docdb.js';
import { EX, building, registrations, room, source, subscriptions, tenantRoom } from './helpers/import-source.js';

const currentState = source.filter((r) => r.kind !== 'temporalEntity' && r.kind !== 'temporalInstance');

t.test('the current state imported into docdb equals the source; an import again refuses all of it', async (t) => {
  const dbName = freshDbName();
  t.teardown(() => dropDatabases(dbName));
  const args = [...docdbArgs(dbName), '--troe', 'none'];
  const imported = await importWith(args, currentState);
  t.equal(imported.anyRefused, false, imported.err);
  t.equal(imported.line('entities'), 'entities: 3 imported, 0 refused');
  t.equal(imported.line('subscriptions'), 'subscriptions: 3 imported, 0 refused');
  t.equal(imported.line('registrations'), 'registrations: 2 imported, 0 refused');
  t.equal(imported.line('created rows (history)'), 'created rows (history): 0 written, 0 failed');

  const broker = await startBroker(args);
  t.teardown(() => broker.stop());
  const types = await call(broker, 'GET', `${NGSI}/types?details=true`);
  t.same(types.json.map((x: { id: string }) => x.id).sort(), [`${EX}Building`, `${EX}Room`, `${EX}Space`]);
  for (const e of [building, room]) {
    const r = await call(broker, 'GET', `${NGSI}/entities/${e.id}?options=sysAttrs`);
    t.same(r.json, e, `${e.id} equals its record, system times at every level`);
  }
  const tenant = await call(broker, 'GET', `${NGSI}/entities/${tenantRoom.id}?options=sysAttrs`, { headers: { 'NGSILD-Tenant': 'acme' } });
  t.same(tenant.json, tenantRoom, 'the tenant Acme is acme');
  const subs = await call(broker, 'GET', `${NGSI}/subscriptions?options=sysAttrs`);
  const s1 = subs.json.find((s: { id: string }) => s.id === subscriptions[0]!.id);
  t.match(s1.notification, { ...subscriptions[0]!.notification, status: 'ok' }, 'counters kept on docdb');
  for (const reg of registrations) {
    const r = await call(broker, 'GET', `${NGSI}/csourceRegistrations/${reg.id}?options=sysAttrs`);
    t.match(r.json, reg, `${reg.id} equals its record`);
  }
  await broker.stop();

  const again = await importWith(args, source);
  t.equal(again.line('entities'), 'entities: 0 imported, 3 refused');
  t.equal(again.line('subscriptions'), 'subscriptions: 0 imported, 3 refused');
  t.equal(again.line('registrations'), 'registrations: 0 imported, 2 refused');
  t.match(again.err, /temporalEntity urn:ngsi-ld:Building:B1 refused: BadRequestData: no history store/);
  t.equal(again.line('temporal instances'), 'temporal instances: 0 imported, 5 refused');
});
