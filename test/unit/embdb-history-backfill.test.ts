// embdb history on disk: a history written before its type index existed gets the index built when the primary
// opens the store, so a temporal query by type finds its entities (deleted ones included) afterwards.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { storeOpen } from '../../src/plugins/store/embdb/index.js';
import type { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';
import type { StoredEntity } from '../../src/store/contract.js';
import { ofTypes } from './helpers/store-query.js';

const NS = 'https://example.org/ns/';
const AT = '2024-01-01T00:00:00.000Z';

function recorder(): {
  msgs: string[];
  log: { debug: () => void; info: (o: object | string, m?: string) => void; warn: () => void; error: () => void };
} {
  const msgs: string[] = [];
  return {
    msgs,
    log: {
      debug: () => {},
      info: (o, m) => {
        msgs.push(typeof o === 'string' ? o : (m ?? ''));
      },
      warn: () => {},
      error: () => {},
    },
  };
}

const openStore = async (path: string, log = recorder().log): Promise<EmbdbStore> =>
  (await storeOpen({ options: { dbPath: path, ram: false }, primary: true, log, keepHistory: true })) as EmbdbStore;

const byType = async (store: EmbdbStore, tenant: string, type: string): Promise<string[]> =>
  (await store.history!.queryTemporalEntities(tenant, { type: ofTypes(NS + type), limit: 100, offset: 0, count: false })).entities
    .map((e) => e.id)
    .sort();

t.test('an older history without a type index gets one at open; a history that has one is left alone', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'embdb-hist-backfill-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'embdb');
  let store = await openStore(path);
  for (const [tenant, type, n] of [
    ['', 'Room', 3],
    ['', 'Car', 2],
    ['city', 'Room', 1],
  ] as const) {
    for (let i = 0; i < n; i++) {
      const id = `urn:ngsi-ld:${type}:${i}`;
      await store.mutateEntity(
        tenant,
        id,
        () => ({
          next: { id, type: [NS + type], createdAt: AT, modifiedAt: AT, [NS + 'p']: [{ type: 'Property', value: i }] } as StoredEntity,
          result: undefined,
        }),
        { createTenant: true },
      );
    }
  }
  await store.mutateEntity('', 'urn:ngsi-ld:Room:2', () => ({ next: null, result: undefined }));
  t.same(await byType(store, '', 'Room'), ['urn:ngsi-ld:Room:0', 'urn:ngsi-ld:Room:1', 'urn:ngsi-ld:Room:2'], 'indexed as written');
  await store.close();

  // What an older broker left behind: temporal entities, no type index.
  const raw = open({ path });
  const index = raw.openDB({ name: 'histTypeIds' });
  await index.clearAsync();
  t.equal(index.getKeysCount(), 0);
  await raw.close();

  const rec = recorder();
  store = await openStore(path, rec.log);
  t.teardown(() => store.close());
  t.same(await byType(store, '', 'Room'), ['urn:ngsi-ld:Room:0', 'urn:ngsi-ld:Room:1', 'urn:ngsi-ld:Room:2'], 'deleted entity included');
  t.same(await byType(store, '', 'Car'), ['urn:ngsi-ld:Car:0', 'urn:ngsi-ld:Car:1']);
  t.same(await byType(store, 'city', 'Room'), ['urn:ngsi-ld:Room:0'], 'per tenant');
  t.ok(rec.msgs.includes('embdb history: type index built'), 'the build is logged');
  await store.close();

  const again = recorder();
  store = await openStore(path, again.log);
  t.notOk(
    again.msgs.some((m) => m.startsWith('embdb history')),
    'nothing to build the next time',
  );
  t.same(await byType(store, '', 'Car'), ['urn:ngsi-ld:Car:0', 'urn:ngsi-ld:Car:1']);
});

t.test('an older history without the index of instances without observedAt gets it at open; the default order finds them', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'embdb-hist-unobserved-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'embdb');
  let store = await openStore(path);
  const id = 'urn:ngsi-ld:Meter:1';
  // Three writes: the attribute without observedAt twice, then with one long before (imported data).
  for (const [i, observedAt] of [
    [1, undefined],
    [2, undefined],
    [3, '2020-01-01T00:00:00.000Z'],
  ] as const) {
    const at = new Date(Date.parse(AT) + i * 1000).toISOString();
    const attr = { type: 'Property', value: i, ...(observedAt === undefined ? {} : { observedAt }) };
    await store.mutateEntity('', id, () => ({
      next: { id, type: [NS + 'Meter'], createdAt: AT, modifiedAt: at, [NS + 'p']: [attr] } as StoredEntity,
      result: undefined,
    }));
  }
  const values = async (lastN?: number): Promise<unknown[]> =>
    (
      (await store.history!.instances('', id, { attrs: [NS + 'p'], order: 'observedAt', limit: 100, ...(lastN ? { lastN } : {}) })).attrs[
        NS + 'p'
      ] ?? []
    ).map((h) => (h as { value: unknown }).value);
  t.same(await values(), [3, 1, 2], 'the observed one (2020) first, then the others at their createdAt');
  t.same(await values(2), [1, 2], 'lastN: the newest two in that order');
  await store.close();

  // What an older broker left behind: no index of the instances without observedAt, no marker.
  const raw = open({ path });
  await raw.openDB({ name: 'histUnobserved' }).clearAsync();
  await raw.openDB({ name: 'histMeta' }).clearAsync();
  await raw.close();

  const rec = recorder();
  store = await openStore(path, rec.log);
  t.teardown(() => store.close());
  t.ok(rec.msgs.includes('embdb history: index of instances without observedAt built'), 'the build is logged');
  t.same(await values(), [3, 1, 2], 'the same order after the build');
  t.same(await values(1), [2]);
  await store.close();

  const again = recorder();
  store = await openStore(path, again.log);
  t.notOk(
    again.msgs.some((m) => m.includes('without observedAt')),
    'nothing to build the next time',
  );
  t.same(await values(2), [1, 2]);
});
