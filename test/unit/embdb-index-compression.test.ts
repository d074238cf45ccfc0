// embdb's indexes keep ids in id order whatever the store's compression (dbCompress): their values are ids compared
// as bytes, which LZ4 (lmdb compresses values from 1000 bytes) would scramble; and a compressed store opened before
// in the same process leaves the next store's databases as that store asks (lmdb writes into the options it is given).
import t from 'tap';
import { tempEmbdb } from './helpers/embdb.js';
import { inBox, ofTypes, qOf } from './helpers/store-query.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import type { EmbdbStore } from '../../src/plugins/store/embdb/embdb-store.js';

const NS = 'https://example.org/ns/';
const T0 = '2026-01-01T00:00:00Z';
/** Ids in id order, the first long enough (1000 bytes and more) that lmdb would compress it as a value. */
const IDS = ['urn:e:-' + 'a'.repeat(1010), 'urn:e:-' + 'b'.repeat(100), 'urn:e:a', 'urn:e:b'];

const entityOf = (id: string, n: number): StoredEntity => ({
  id,
  type: [NS + 'A'],
  createdAt: T0,
  modifiedAt: T0,
  [NS + 'speed']: [{ type: 'Property', value: 50 + n }],
  [NS + 'location']: [{ type: 'GeoProperty', value: { type: 'Point', coordinates: [10, 50] } }],
});

async function indexOrders(store: EmbdbStore): Promise<Record<string, string[]>> {
  await store.mutateEntities(
    '',
    IDS.map((id, n) => ({ id, mutation: () => ({ next: entityOf(id, n), result: undefined }) })),
    { createTenant: true },
  );
  const ids = async (query: object): Promise<string[]> =>
    (await store.queryEntities('', { ...query, limit: 100, offset: 0 })).entities.map((e) => e.id);
  return {
    type: await ids({ type: ofTypes(NS + 'A') }),
    geo: await ids({ geo: inBox(NS + 'location', [9, 49, 11, 51]) }),
    // The number index: by speed, which rises with the id's place here.
    number: await ids({ type: ofTypes(NS + 'A'), q: qOf('speed>10', NS) }),
  };
}

const inIdOrder = { type: IDS, geo: IDS, number: IDS };

t.test('a compressed store: the type, spatial and number indexes hold ids of 1000 bytes and more in id order', async (t) => {
  t.same(await indexOrders(tempEmbdb(t, { compress: true })), inIdOrder);
});

t.test('a store opened after a compressed one in the same process: its indexes in id order too', async (t) => {
  const compressed = tempEmbdb(t, { compress: true });
  await compressed.close();
  t.same(await indexOrders(tempEmbdb(t, { compress: false })), inIdOrder);
});
