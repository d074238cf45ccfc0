// History capture in the store's transaction (--troe embdb): the history's latest instance of an attribute is the
// current value even when two writes commit in the other order than the times they took before their transactions.
import t from 'tap';
import { tempEmbdb } from './helpers/embdb.js';
import type { StoredEntity } from '../../src/store/contract.js';

const A = 'https://example.org/a';

for (const lockPrefer of ['writes', 'reads'] as const)
  t.test(
    `a write stamped earlier than the latest instance but committed later is the latest in history (dbLockPrefer ${lockPrefer})`,
    async (t) => {
      const store = tempEmbdb(t, { lockPrefer, troe: 'embdb' });
      const id = 'urn:ngsi-ld:T:1';
      const write = (value: number, at: string) =>
        store.mutateEntity('', id, (cur: StoredEntity | undefined) => {
          const next: StoredEntity = { id, type: ['https://example.org/T'], createdAt: cur?.createdAt ?? at, modifiedAt: at };
          next[A] = [{ type: 'Property', value, createdAt: at, modifiedAt: at }];
          return { next, result: undefined };
        });
      await write(1, '2024-01-01T00:00:00.005Z');
      await write(2, '2024-01-01T00:00:00.009Z');
      // Took its time (00.007) before the write above committed, committed after it: it is the current value.
      await write(3, '2024-01-01T00:00:00.007Z');
      await write(4, '2024-01-01T00:00:00.009Z');
      await write(5, '2024-01-01T00:00:00.009Z');
      const page = await store.history!.instances('', id, { lastN: 1, limit: 10 });
      t.same(
        page.attrs[A]!.map((i) => i.value),
        [5],
      );
      const all = await store.history!.instances('', id, { limit: 10 });
      t.same(
        all.attrs[A]!.map((i) => i.value),
        [1, 2, 3, 4, 5],
        'instances in commit order',
      );
      t.same(
        all.attrs[A]!.map((i) => i.createdAt.slice(-5)),
        ['.005Z', '.009Z', '.009Z', '.009Z', '.009Z'],
        'a late commit takes the latest time',
      );
      t.equal(new Set(all.attrs[A]!.map((i) => i.instanceId)).size, 5, 'instanceIds stay distinct');
      // Two writes of one attribute in one transaction (a batch): the second sees the first's instance.
      const both = await store.mutateEntities(
        '',
        [3, 4].map((v) => ({
          id,
          mutation: (cur: StoredEntity | undefined) => {
            const at = '2024-01-01T00:00:00.001Z';
            const next: StoredEntity = { id, type: ['https://example.org/T'], createdAt: cur?.createdAt ?? at, modifiedAt: at };
            next[A] = [{ type: 'Property', value: v * 10, createdAt: at, modifiedAt: at }];
            return { next, result: undefined };
          },
        })),
      );
      t.equal(both.length, 2);
      const latest = await store.history!.instances('', id, { lastN: 2, limit: 10 });
      t.same(
        latest.attrs[A]!.map((i) => i.value),
        [30, 40],
        'batch entries in their order, after the earlier ones',
      );
    },
  );

t.test('instances added by the temporal API after later-stamped ones follow them, in the order given', async (t) => {
  const store = tempEmbdb(t, { troe: 'embdb' });
  const h = store.history!;
  const entity = { id: 'urn:ngsi-ld:T:2', type: ['https://example.org/T'] };
  const p = (value: number) => ({ type: 'Property' as const, value });
  await h.addInstances('', entity, { [A]: [p(1), p(2)] }, '2024-01-01T00:00:00.009Z');
  await h.addInstances('', entity, { [A]: [p(3), p(4), p(5)] }, '2024-01-01T00:00:00.004Z');
  const all = await h.instances('', entity.id, { limit: 10 });
  t.same(
    all.attrs[A]!.map((i) => i.value),
    [1, 2, 3, 4, 5],
  );
  t.same(
    all.attrs[A]!.map((i) => i.createdAt.slice(-5)),
    ['.009Z', '.009Z', '.009Z', '.009Z', '.009Z'],
  );
  t.same(
    (await h.instances('', entity.id, { lastN: 1, limit: 10 })).attrs[A]!.map((i) => i.value),
    [5],
  );
});
