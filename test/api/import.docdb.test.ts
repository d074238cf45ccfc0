// ldbroker-import into --database docdb (FerretDB, test/services/ferretdb.sh) with --troe none: the current state of
// the stream (entities of every attribute type, two tenants, subscriptions with their counters, registrations), then
// a broker on the same database answers as the source; the history records are refused (no history store) and named.
// Entities go in batches (one read and one insert command per batch, counted on the importer's client). A database
// a running broker uses is refused (its presence lease, plugins/store/docdb/presence.ts).
import t from 'tap';
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { startBroker, call, NGSI } from './helpers/broker.js';
import { importWith, ndjson, runImporter } from './helpers/import.js';
import { docdbArgs, dropDatabases, freshDbName, mongoUrl } from './helpers/docdb.js';
import { EX, building, registrations, room, source, subscriptions, tenantRoom } from './helpers/import-source.js';

const T = '2024-01-01T00:00:00.000Z';
const currentState = source.filter((r) => r.kind !== 'temporalEntity' && r.kind !== 'temporalInstance');

/** MongoClient's connect, with each command the client then sends counted in `seen` by name and collection. */
function counting(connect: typeof MongoClient.prototype.connect, seen: Map<string, number>): typeof connect {
  return function (this: MongoClient) {
    this.on('commandStarted', (e: CommandStartedEvent) => {
      const k = `${e.commandName} ${String(e.command[e.commandName])}`;
      seen.set(k, (seen.get(k) ?? 0) + 1);
    });
    return connect.call(this);
  } as typeof connect;
}

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

t.test(
  'entities go into docdb in batches: one insert per batch of records (a read only for ids that exist), no round trip per record',
  async (t) => {
    const dbName = freshDbName();
    t.teardown(() => dropDatabases(dbName));
    const n = 1000;
    const at = '2024-01-01T00:00:00.000Z';
    const records = Array.from({ length: n }, (_, i) => ({
      kind: 'entity',
      data: {
        id: `urn:ngsi-ld:Meter:${i}`,
        type: `${EX}Meter`,
        createdAt: at,
        modifiedAt: at,
        [`${EX}n`]: { type: 'Property', value: i, createdAt: at, modifiedAt: at },
      },
    }));
    // The importer's own client, in this process: its commands counted as the docdb round-trip tests count them.
    const seen = new Map<string, number>();
    const connect = MongoClient.prototype.connect;
    MongoClient.prototype.connect = counting(connect, seen);
    t.teardown(() => {
      MongoClient.prototype.connect = connect;
    });
    const url = new URL(mongoUrl());
    url.searchParams.set('monitorCommands', 'true');
    const imported = await importWith([...docdbArgs(dbName, url.toString()), '--troe', 'none'], records);
    MongoClient.prototype.connect = connect;
    t.equal(imported.line('entities'), `entities: ${n} imported, 0 refused`, imported.err);
    const batches = Math.ceil(n / 200);
    t.equal(seen.get('insert entities'), batches, 'one insert per batch of 200');
    t.notOk(seen.has('find entities'), 'no read: the batches expect no entity (a scan of the collection per batch on FerretDB)');
    t.notOk(seen.has('update entities'), 'no upsert per entity');

    seen.clear();
    MongoClient.prototype.connect = counting(connect, seen);
    const again = await importWith([...docdbArgs(dbName, url.toString()), '--troe', 'none'], records.slice(0, 300));
    MongoClient.prototype.connect = connect;
    t.equal(again.line('entities'), 'entities: 0 imported, 300 refused', 'run again: every id refused, never overwritten');
    t.match(again.err, /line 1: entity urn:ngsi-ld:Meter:0 refused: AlreadyExists/);
    t.equal(seen.get('insert entities'), 2, 'one insert per batch, each of duplicate keys only');
    // FerretDB (the tests' server) reads a `$in` as the whole collection: a batch reads its ids one by one there.
    t.equal(seen.get('find entities'), 300, 'then the read of each batch finds them (a find by _id per id on FerretDB)');
  },
);

t.test('a database a running broker uses is refused with a clear line, nothing written; once it stopped, the import goes in', async (t) => {
  const dbName = freshDbName();
  t.teardown(() => dropDatabases(dbName));
  const args = [...docdbArgs(dbName), '--troe', 'none'];
  const one = ndjson([{ kind: 'entity', data: { id: 'urn:ngsi-ld:Meter:held', type: `${EX}Meter`, createdAt: T, modifiedAt: T } }]);
  // The broker in this process, the importer in its own: the lease names this process.
  const broker = await startBroker(['--database', 'docdb', '--dbURI', mongoUrl(), '--dbName', dbName]);
  t.teardown(() => broker.stop());
  const held = await runImporter([...args, '--file', '-'], one);
  t.equal(held.code, 2, held.stderr);
  t.match(
    held.stderr,
    new RegExp(
      `the store is in use by another process \\(database '${dbName}' is used by \\S+ pid ${process.pid}, seen \\d+ s ago\\): stop the broker before importing`,
    ),
  );
  t.equal((await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Meter:held`)).status, 404, 'nothing written');
  await broker.stop();
  const after = await runImporter([...args, '--file', '-'], one);
  t.equal(after.code, 0, `a broker stopped removes its lease: ${after.stderr}`);
});

t.test('the lease of a broker that died (not refreshed for 20 s) does not hold the database', async (t) => {
  const dbName = freshDbName();
  t.teardown(() => dropDatabases(dbName));
  const client = new MongoClient(mongoUrl(), { serverSelectionTimeoutMS: 5000 });
  t.teardown(() => client.close());
  const leases = client
    .db(dbName)
    .collection<{ _id: string; host: string; pid: number; startedAt: string; seenAt: number }>('brokerPresence');
  await leases.insertOne({ _id: 'gone:1:x', host: 'gone', pid: 1, startedAt: '2026-01-01T00:00:00.000Z', seenAt: Date.now() - 25_000 });
  const args = [...docdbArgs(dbName), '--troe', 'none'];
  const one = ndjson([{ kind: 'entity', data: { id: 'urn:ngsi-ld:Meter:stale', type: `${EX}Meter`, createdAt: T, modifiedAt: T } }]);
  const r = await runImporter([...args, '--file', '-'], one);
  t.equal(r.code, 0, r.stderr);
  // A fresh one (another host's broker, as its lease says) does.
  await leases.updateOne({ _id: 'gone:1:x' }, { $set: { seenAt: Date.now() } });
  const again = await runImporter([...args, '--file', '-'], one);
  t.equal(again.code, 2);
  t.match(again.stderr, /is used by gone pid 1, seen \d+ s ago\): stop the broker before importing/);
  t.same(await leases.find({}, { projection: { _id: 1 } }).toArray(), [{ _id: 'gone:1:x' }], "the importer's own lease removed at its end");
});
