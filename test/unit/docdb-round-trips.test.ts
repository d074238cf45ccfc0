// docdb round trips (issue 17: no N+1): a batch of any kind is one read and one write command on the entities (a
// batch of creates only an insert, issue 21: the importer's batches),
// whatever its size (on FerretDB plus one claim and one release, claims.ts, one update command per replacement, and
// the read one find by _id per id, as it does not push a `$in` down: layout.ts IdReads); the entities of an id list (a join=flat
// level) are one read (on FerretDB one find by _id per id, as a batch's); and the join reads a level through that one
// call (ops/linked.ts), not one store read per id. The
// commands are counted with the driver's command monitoring (`commandStarted`) on the store's own client.
import t, { type Test } from 'tap';
import type { MongoClient, CommandStartedEvent } from 'mongodb';
import { storeOpen } from '../../src/plugins/store/docdb/index.js';
import { PRESENCE } from '../../src/plugins/store/docdb/presence.js';
import type { Store, StoredEntity, BatchItem } from '../../src/store/contract.js';
import { flatLinked } from '../../src/ops/linked.js';
import type { LdRequest } from '../../src/pipeline/ld-request.js';
import type { WorkerContext } from '../../src/pipeline/worker-context.js';
import { dropDatabases, freshDbName, mongoUrl } from '../api/helpers/docdb.js';
import { mapContext, DEFAULT_VOCAB } from './helpers/map-context.js';

const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const T0 = '2026-01-01T00:00:00.000Z';
const N = 40;

const entity = (id: string, n: number, link?: string): StoredEntity =>
  ({
    id,
    type: [DEFAULT_VOCAB + 'Thing'],
    createdAt: T0,
    modifiedAt: T0,
    [DEFAULT_VOCAB + 'n']: [{ type: 'Property', value: n }],
    ...(link === undefined ? {} : { [DEFAULT_VOCAB + 'link']: [{ type: 'Relationship', object: link }] }),
  }) as StoredEntity;

const ids = (prefix: string, n = N): string[] => Array.from({ length: n }, (_, i) => `urn:${prefix}:${i}`);

/** The commands the store sends, as `<command> <collection>`, while `fn` runs. */
async function commands(store: Store, fn: () => Promise<unknown>): Promise<string[]> {
  // The client is the store's own (private): the test listens on it, the product never monitors.
  const client = (store as unknown as { client: MongoClient }).client;
  // Releases of claims from before (sent in bulk, on a timer) are not this call's.
  await (store as unknown as { releases: { flush(): Promise<void> } }).releases.flush();
  const seen: string[] = [];
  const listen = (e: CommandStartedEvent): void => {
    if (['hello', 'isMaster', 'endSessions', 'buildInfo'].includes(e.commandName)) return;
    // The store's presence heartbeat (every PRESENCE_REFRESH_MS on its own timer) is no command of `fn`: on a loaded
    // machine a beat fell inside a counted batch ("update brokerPresence").
    if (e.command[e.commandName] === PRESENCE) return;
    seen.push(`${e.commandName} ${String(e.command[e.commandName])}`);
  };
  client.on('commandStarted', listen);
  try {
    await fn();
  } finally {
    client.off('commandStarted', listen);
  }
  return seen.sort();
}

async function open(t: Test): Promise<Store> {
  const dbName = freshDbName();
  const url = new URL(mongoUrl());
  url.searchParams.set('monitorCommands', 'true');
  const store = await storeOpen({ options: { dbURI: url.toString(), dbName }, primary: true, log });
  t.teardown(async () => {
    await store.close();
    await dropDatabases(dbName);
  });
  return store;
}

const put = (e: StoredEntity): BatchItem<null> => ({ id: e.id, mutation: () => ({ next: e, result: null }) });
const drop = (id: string): BatchItem<null> => ({ id, mutation: (cur) => ({ next: cur === undefined ? undefined : null, result: null }) });

t.test('a batch of any kind is one read and one write of the entities, whatever its size', async (t) => {
  const store = await open(t);
  // the layout (indexes, the server kind) is made by the first write: not counted
  await store.mutateEntities('', [put(entity('urn:warm', 0))]);
  const ferret = await isFerret(store);
  // The claim's release goes later, gathered with others (claims.ts ClaimReleases).
  const claims = ferret ? ['insert writeClaims'] : [];
  // On FerretDB each replacement is an update command of its own (docdb-store.ts bulkConditional: its update command
  // holds a connection per statement until it ends, and 100 of them wait for ever).
  // On FerretDB the batch's read is one find by _id per id (layout.ts IdReads: it reads a `$in` as the whole collection).
  const reads = Array<string>(ferret ? N : 1).fill('find entities');
  const expect = (write: string, claimed: boolean): string[] =>
    [...(claimed ? claims : []), ...reads, ...Array<string>(ferret && write.startsWith('update') ? N : 1).fill(write)].sort();

  t.same(
    await commands(store, () =>
      store.mutateEntities(
        '',
        ids('a').map((id, i) => put(entity(id, i))),
      ),
    ),
    expect('insert entities', false),
    'create: one insert (FerretDB runs each upsert as a find and an insert)',
  );
  // A create of ids that exist (an import run again): the read finds them, the mutation refuses, nothing is written.
  const again = await commands(store, async () => {
    const outcomes = await store.mutateEntities(
      '',
      ids('a').map((id) => ({
        id,
        mutation: (cur: StoredEntity | undefined) => {
          if (cur !== undefined) throw new Error('exists');
          return { next: entity(id, 0), result: null };
        },
      })),
    );
    t.ok(
      outcomes.every((o) => !o.ok),
      'every create of an existing id refused',
    );
  });
  t.same(again, reads, 'creates of existing ids: the read only');
  // upsert: half the ids exist (replaced), half are new (created): still one write command
  const mixed = [...ids('a', N / 2), ...ids('b', N / 2)];
  t.same(
    await commands(store, () =>
      store.mutateEntities(
        '',
        mixed.map((id, i) => put(entity(id, i + 100))),
      ),
    ),
    ferret
      ? [...claims, ...reads, 'insert entities', ...Array<string>(N / 2).fill('update entities')].sort()
      : expect('update entities', true),
    'upsert of existing and new ids (FerretDB: the new ones inserted, as it runs an upsert as a scan and an insert)',
  );
  t.same(
    await commands(store, () =>
      store.mutateEntities(
        '',
        ids('a').map((id) => ({ id, mutation: (cur: StoredEntity | undefined) => ({ next: cur && entity(id, 7), result: null }) })),
      ),
    ),
    expect('update entities', true),
    'update / merge',
  );
  t.same(await commands(store, () => store.mutateEntities('', ids('a').map(drop))), expect('delete entities', true), 'delete');
  t.equal((await store.getEntity('', 'urn:a:1')) === undefined, true, 'the deletes were applied');
  t.same((await store.getEntity('', 'urn:b:3'))?.[DEFAULT_VOCAB + 'n'], [{ type: 'Property', value: 123 }], 'the upsert was applied');
});

t.test('creates that expect no entity (the importer) are one insert, no read; an id that exists still sees it', async (t) => {
  const store = await open(t);
  await store.mutateEntities('', [put(entity('urn:warm', 0)), put(entity('urn:e:3', 33))]);
  const create = (id: string, n: number): BatchItem<string> => ({
    id,
    mutation: (cur) => {
      if (cur !== undefined) throw new Error(`exists with ${String((cur[DEFAULT_VOCAB + 'n'] as Array<{ value: number }>)[0]!.value)}`);
      return { next: entity(id, n), result: 'created' };
    },
  });
  let outcomes: Awaited<ReturnType<Store['mutateEntities']>> = [];
  const fresh = await commands(store, async () => {
    outcomes = await store.mutateEntities(
      '',
      ids('f').map((id, i) => create(id, i)),
      { expectAbsent: true },
    );
  });
  t.same(fresh, ['insert entities'], 'new ids: the insert only');
  t.ok(
    outcomes.every((o) => o.ok && o.result === 'created'),
    'every new id created',
  );
  // urn:e:3 exists: its insert is a duplicate key, then it is read and its mutation refuses (never overwritten);
  // urn:warm is deleted by its entry, which therefore runs on the entity read.
  const mixed = await commands(store, async () => {
    outcomes = await store.mutateEntities(
      '',
      [
        create('urn:e:1', 1),
        create('urn:e:3', 3),
        { id: 'urn:warm', mutation: (cur) => ({ next: cur === undefined ? undefined : null, result: 'deleted' }) },
      ],
      { expectAbsent: true },
    );
  });
  t.match(outcomes, [
    { ok: true, result: 'created' },
    { ok: false, error: { message: 'exists with 33' } },
    { ok: true, result: 'deleted' },
  ]);
  t.same((await store.getEntity('', 'urn:e:3'))?.[DEFAULT_VOCAB + 'n'], [{ type: 'Property', value: 33 }], 'the existing entity kept');
  t.equal(await store.getEntity('', 'urn:warm'), undefined, 'the delete entry deleted');
  t.ok(
    mixed.includes('insert entities') && mixed.filter((c) => c === 'find entities').length === ((await isFerret(store)) ? 2 : 1),
    'one insert, then one read of the two unsure ids (FerretDB: one per id)',
  );
  // One entity (POST /entities): a new id is the insert alone; an id that exists is refused on the entity read.
  const one = (id: string, n: number) => store.mutateEntity('', id, create(id, n).mutation, { expectAbsent: true });
  t.same(await commands(store, () => one('urn:e:9', 9)), ['insert entities'], 'a create of a new id: the insert only');
  let refused: unknown;
  t.same(
    await commands(store, () => one('urn:e:3', 0).catch((e: unknown) => (refused = e))),
    ['find entities', 'insert entities'],
    'a create of an existing id: the insert refused, then the read',
  );
  t.match(refused, { message: 'exists with 33' }, 'the mutation refused on the entity as it is');
  t.same((await store.getEntity('', 'urn:e:3'))?.[DEFAULT_VOCAB + 'n'], [{ type: 'Property', value: 33 }], 'never overwritten');
});

t.test('FerretDB: the claims of writes that landed are released together, none left behind', async (t) => {
  const store = await open(t);
  if (!(await isFerret(store))) return t.pass('MongoDB writes claim nothing');
  await store.mutateEntities(
    '',
    ids('g').map((id, i) => put(entity(id, i))),
  );
  const seen = await commands(store, async () => {
    for (const [i, id] of ids('g').entries()) await store.mutateEntity('', id, () => ({ next: entity(id, i + 1), result: null }));
    await (store as unknown as { releases: { flush(): Promise<void> } }).releases.flush();
  });
  t.equal(seen.filter((c) => c === 'insert writeClaims').length, N, 'one claim per write');
  const client = (store as unknown as { client: MongoClient }).client;
  const dbName = (store as unknown as { settings: { dbName: string } }).settings.dbName;
  t.equal(await client.db(dbName).collection('writeClaims').countDocuments({}), 0, 'no claim left');
  t.same((await store.getEntity('', 'urn:g:5'))?.[DEFAULT_VOCAB + 'n'], [{ type: 'Property', value: 6 }], 'the writes landed');
});

t.test('FerretDB: a creating batch (an upsert) inserts first, reads only the ids that exist, and replaces those', async (t) => {
  const store = await open(t);
  await store.mutateEntities(
    '',
    ids('u', N / 2).map((id, i) => put(entity(id, i))),
  );
  const mixed = ids('u', N); // the first half exist, the second half are new
  let outcomes: Awaited<ReturnType<Store['mutateEntities']>> = [];
  const seen = await commands(store, async () => {
    outcomes = await store.mutateEntities(
      '',
      mixed.map((id, i) => put(entity(id, i + 500))),
      { createTenant: true },
    );
  });
  t.ok(
    outcomes.every((o) => o.ok),
    'every entry applied',
  );
  for (const i of [0, N / 2 - 1, N / 2, N - 1])
    t.same((await store.getEntity('', mixed[i]!))?.[DEFAULT_VOCAB + 'n'], [{ type: 'Property', value: i + 500 }], `${mixed[i]} written`);
  const count = (c: string): number => seen.filter((x) => x === c).length;
  if (await isFerret(store)) {
    t.equal(count('insert entities'), 1, 'one insert of the batch (the new ids go in)');
    t.equal(count('find entities'), N / 2, 'one read by _id per id that exists, of those only');
    t.equal(count('update entities'), N / 2, 'a replacement per existing id');
  } else t.equal(count('find entities'), 1, 'MongoDB: the read first, as ever');
});

t.test('FerretDB: entity writes filter on _id alone (the one filter it pushes down), creates are inserts', async (t) => {
  const store = await open(t);
  if (!(await isFerret(store))) return t.pass('MongoDB: the condition on the version is in the filter, served by _id');
  // FerretDB 1.24 passes a filter to SQLite only when it is `{_id: <string>}`; any other filter of an update or a
  // delete is a read and decode of every document of the collection (a PATCH took 500 ms on 1,000 entities).
  const client = (store as unknown as { client: MongoClient }).client;
  const filters: Array<{ cmd: string; q: Record<string, unknown> }> = [];
  const listen = (e: CommandStartedEvent): void => {
    if (e.command[e.commandName] !== 'entities') return;
    if (e.commandName === 'update')
      for (const u of e.command.updates as Array<{ q: Record<string, unknown> }>) filters.push({ cmd: 'update', q: u.q });
    if (e.commandName === 'delete')
      for (const d of e.command.deletes as Array<{ q: Record<string, unknown> }>) filters.push({ cmd: 'delete', q: d.q });
  };
  client.on('commandStarted', listen);
  t.teardown(() => void client.off('commandStarted', listen));
  await store.mutateEntities(
    '',
    ids('f').map((id, i) => put(entity(id, i))),
  );
  await store.mutateEntity('', 'urn:f:1', () => ({ next: entity('urn:f:1', 100), result: null }));
  const half = [...ids('f', N / 2), ...ids('fnew', N / 2)];
  const seen = await commands(store, () =>
    store.mutateEntities(
      '',
      half.map((id, i) => put(entity(id, i + 200))),
      { createTenant: true },
    ),
  );
  t.equal(seen.filter((c) => c === 'update entities').length, N / 2, 'a replacement per existing id');
  t.equal(seen.filter((c) => c === 'insert entities').length, 1, 'the new ids in one insert');
  await store.mutateEntities(
    '',
    ids('fnew', N / 2).map((id, i) => put(entity(id, i + 300))),
  );
  await store.mutateEntity('', 'urn:f:2', drop('urn:f:2').mutation);
  await store.mutateEntities('', ids('f', 4).slice(3).map(drop));
  t.ok(filters.some((f) => f.cmd === 'update') && filters.some((f) => f.cmd === 'delete'), 'updates and deletes were sent');
  t.same(
    filters.filter((f) => Object.keys(f.q).join() !== '_id' || typeof f.q._id !== 'string'),
    [],
    'every filter is {_id: <string>}: no upsert on the absence of `v`, no condition on `v`',
  );
  t.same((await store.getEntity('', 'urn:f:1'))?.[DEFAULT_VOCAB + 'n'], [{ type: 'Property', value: 201 }], 'the writes landed');
  t.same((await store.getEntity('', 'urn:fnew:3'))?.[DEFAULT_VOCAB + 'n'], [{ type: 'Property', value: 303 }]);
  t.equal(await store.getEntity('', 'urn:f:2'), undefined, 'deleted');
  t.equal(await store.getEntity('', 'urn:f:3'), undefined, 'deleted in a batch');
});

t.test('FerretDB: the entities get no secondary index (none serves a query there, each costs every write)', async (t) => {
  const store = await open(t);
  await store.mutateEntities('', [put(entity('urn:i:1', 1))]);
  const client = (store as unknown as { client: MongoClient }).client;
  const dbName = (store as unknown as { settings: { dbName: string } }).settings.dbName;
  const names = (await client.db(dbName).collection('entities').indexes()).map((i) => i.name).sort();
  if (await isFerret(store)) t.same(names, ['_id_'], 'FerretDB: its own _id index only');
  else
    t.same(
      names,
      ['_id_', 'attrs', 'geo', 'gbWildcard', 'qother', 'qvWildcard', 'scope', 'type'].sort(),
      'MongoDB: the indexes queries use',
    );
});

t.test('an id list is one read (FerretDB: one find by _id per id)', async (t) => {
  const store = await open(t);
  const reads = Array<string>((await isFerret(store)) ? N : 1).fill('find entities');
  await store.mutateEntities(
    '',
    ids('c').map((id, i) => put(entity(id, i))),
  );
  let page: StoredEntity[] = [];
  const seen = await commands(store, async () => {
    page = (await store.queryEntities('', { ids: ids('c').reverse(), limit: N, offset: 0, count: false })).entities;
  });
  t.same(seen, reads);
  t.same(
    page.map((e) => e.id),
    ids('c').reverse(),
    'in the order of the ids',
  );
});

t.test('a join=flat level is one store read, not one per linked entity', async (t) => {
  const store = await open(t);
  const reads = Array<string>((await isFerret(store)) ? N : 1).fill('find entities');
  const targets = ids('d');
  await store.mutateEntities('', [...targets.map((id, i) => put(entity(id, i)))]);
  const primaries = targets.map((id, i) => entity(`urn:p:${i}`, i, id));
  const req = { tenant: '', context: mapContext() } as unknown as LdRequest;
  const ctx = { store } as unknown as WorkerContext;
  let linked: Record<string, unknown>[] = [];
  const seen = await commands(store, async () => {
    linked = await flatLinked(req, ctx, primaries, { mode: 'flat', level: 1, containedBy: new Set() }, {
      format: 'normalized',
      sysAttrs: false,
    } as never);
  });
  t.same(seen, reads, `${N} linked entities in one store read (one round trip on MongoDB)`);
  t.same(linked.map((e) => e['id']).sort(), [...targets].sort());
});

t.test(
  'a query page: sorted by id on MongoDB (its indexes serve it), in row order on FerretDB (no sort it cannot push down)',
  async (t) => {
    const store = await open(t);
    await store.mutateEntities(
      '',
      ids('q').map((id, i) => put(entity(id, i))),
    );
    const client = (store as unknown as { client: MongoClient }).client;
    const sorts: unknown[] = [];
    const listen = (e: CommandStartedEvent): void => {
      if (e.commandName !== 'find') return;
      const sort: unknown = e.command['sort'];
      sorts.push(sort instanceof Map ? Object.fromEntries(sort) : sort);
    };
    client.on('commandStarted', listen);
    t.teardown(() => void client.off('commandStarted', listen));
    const byType = { type: { kind: 'type' as const, name: DEFAULT_VOCAB + 'Thing' }, limit: 10, offset: 0, count: false };
    const withQ = { ...byType, q: { kind: 'exists' as const, path: { attr: [DEFAULT_VOCAB + 'n'], compound: [] } } } as never;
    const pages: string[] = [];
    for (let offset = 0; offset < N; offset += 10)
      pages.push(...(await store.queryEntities('', { ...byType, offset })).entities.map((e) => e.id));
    t.same([...pages].sort(), [...ids('q')].sort(), 'the pages cut every entity once');
    t.equal((await store.queryEntities('', withQ)).entities.length, 10, 'a page of a query the worker finishes');
    const ferret = await isFerret(store);
    t.same(
      sorts,
      ferret ? [undefined, undefined, undefined, undefined, undefined] : Array(5).fill({ _id: 1 }),
      ferret ? 'FerretDB: no sort' : 'MongoDB: by id',
    );
    if (!ferret) return;
    // The same store told it talks to MongoDB sends the sort by id (FerretDB answers it, only slowly).
    sorts.length = 0;
    (store as unknown as { server: Promise<string> }).server = Promise.resolve('mongodb');
    await store.queryEntities('', byType);
    await store.queryEntities('', withQ);
    t.same(sorts, [{ _id: 1 }, { _id: 1 }], 'MongoDB: by id, the page and the candidates the worker tests');
  },
);

async function isFerret(store: Store): Promise<boolean> {
  const client = (store as unknown as { client: MongoClient }).client;
  const info = await client.db('admin').command({ buildInfo: 1 });
  return typeof info['ferretdbVersion'] === 'string';
}
