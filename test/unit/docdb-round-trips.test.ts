// docdb round trips (issue 17: no N+1): a batch of any kind is one read and one write command on the entities (a
// batch of creates only an insert, issue 21: the importer's batches),
// whatever its size (on FerretDB plus one claim and one release, claims.ts); the entities of an id list (a join=flat
// level) are one read; and the join reads a level through that one call (ops/linked.ts), not one read per id. The
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
  const claims = (await isFerret(store)) ? ['delete writeClaims', 'insert writeClaims'] : [];
  const expect = (write: string, claimed: boolean): string[] => [...(claimed ? claims : []), 'find entities', write].sort();

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
  t.same(again, ['find entities'], 'creates of existing ids: the read only');
  // upsert: half the ids exist (replaced), half are new (created): still one write command
  const mixed = [...ids('a', N / 2), ...ids('b', N / 2)];
  t.same(
    await commands(store, () =>
      store.mutateEntities(
        '',
        mixed.map((id, i) => put(entity(id, i + 100))),
      ),
    ),
    expect('update entities', true),
    'upsert of existing and new ids',
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

t.test('an id list is one read', async (t) => {
  const store = await open(t);
  await store.mutateEntities(
    '',
    ids('c').map((id, i) => put(entity(id, i))),
  );
  let page: StoredEntity[] = [];
  const seen = await commands(store, async () => {
    page = (await store.queryEntities('', { ids: ids('c').reverse(), limit: N, offset: 0, count: false })).entities;
  });
  t.same(seen, ['find entities']);
  t.same(
    page.map((e) => e.id),
    ids('c').reverse(),
    'in the order of the ids',
  );
});

t.test('a join=flat level is one store read, not one per linked entity', async (t) => {
  const store = await open(t);
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
  t.same(seen, ['find entities'], `${N} linked entities in one round trip`);
  t.same(linked.map((e) => e['id']).sort(), [...targets].sort());
});

async function isFerret(store: Store): Promise<boolean> {
  const client = (store as unknown as { client: MongoClient }).client;
  const info = await client.db('admin').command({ buildInfo: 1 });
  return typeof info['ferretdbVersion'] === 'string';
}
