// embdb history without a time window (InstanceSelection.order 'observedAt'): instances in observedAt order, those
// without observedAt at their createdAt, lastN picked from that order; datasetId filters and the limit still apply.
import t from 'tap';
import { tempEmbdb } from './helpers/embdb.js';

const A = 'https://example.org/a';
const entity = { id: 'urn:ngsi-ld:T:1', type: ['https://example.org/T'] };
const obs = (value: string, observedAt?: string, datasetId?: string) => ({
  type: 'Property' as const,
  value,
  ...(observedAt === undefined ? {} : { observedAt }),
  ...(datasetId === undefined ? {} : { datasetId }),
});

t.test('instances are ordered by observedAt, those without one at their createdAt, and lastN takes the latest', async (t) => {
  const store = tempEmbdb(t, { troe: 'embdb' });
  const h = store.history!;
  // Written in this order: created at 12:00, 12:01, ... (the time argument), observed at the hours given.
  await h.addInstances('', entity, { [A]: [obs('10h', '2024-01-01T10:00:00Z')] }, '2024-01-01T12:00:00.000Z');
  await h.addInstances('', entity, { [A]: [obs('11h', '2024-01-01T11:00:00Z')] }, '2024-01-01T12:01:00.000Z');
  await h.addInstances('', entity, { [A]: [obs('09h', '2024-01-01T09:00:00Z')] }, '2024-01-01T12:02:00.000Z');
  await h.addInstances('', entity, { [A]: [obs('none')] }, '2024-01-01T12:03:00.000Z');
  await h.addInstances('', entity, { [A]: [obs('13h fr', '2024-01-01T13:00:00Z', 'urn:ds:fr')] }, '2024-01-01T12:04:00.000Z');
  const values = async (sel: Partial<Parameters<typeof h.instances>[2]>): Promise<unknown[]> =>
    ((await h.instances('', entity.id, { limit: 100, ...sel })).attrs[A] ?? []).map((i) => i.value);
  t.same(await values({}), ['10h', '11h', '09h', 'none', '13h fr'], 'without order: as written (createdAt)');
  t.same(await values({ order: 'observedAt' }), ['09h', '10h', '11h', 'none', '13h fr']);
  t.same(await values({ order: 'observedAt', lastN: 1 }), ['13h fr']);
  t.same(await values({ order: 'observedAt', lastN: 3 }), ['11h', 'none', '13h fr'], 'oldest first');
  t.same(
    await values({ order: 'observedAt', lastN: 2, datasetIds: new Set(['@none']) }),
    ['11h', 'none'],
    'datasetId applies before lastN',
  );
  const capped = await h.instances('', entity.id, { order: 'observedAt', limit: 2 });
  t.same(
    capped.attrs[A]!.map((i) => i.value),
    ['09h', '10h'],
  );
  t.same(capped.truncated, [A], 'more than the limit is truncated');
});
