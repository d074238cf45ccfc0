// The releases of docdb's write claims on FerretDB (claims.ts ClaimReleases): gathered per database and sent as one
// delete, not one per write; in order; an error goes to the handler, never to the writer.
import t from 'tap';
import type { Collection } from 'mongodb';
import { ClaimReleases, type ClaimDoc } from '../../src/plugins/store/docdb/claims.js';

function fakeClaims(dbName: string, deletes: Array<{ db: string; ids: string[] }>, fail = false): Collection<ClaimDoc> {
  return {
    dbName,
    deleteMany: (filter: { _id: { $in: string[] } }) => {
      deletes.push({ db: dbName, ids: filter._id.$in });
      return fail ? Promise.reject(new Error('server gone')) : Promise.resolve({ acknowledged: true, deletedCount: filter._id.$in.length });
    },
  } as unknown as Collection<ClaimDoc>;
}

t.test('releases of many writes go as one delete per database', async (t) => {
  const deletes: Array<{ db: string; ids: string[] }> = [];
  const errors: unknown[] = [];
  const releases = new ClaimReleases((e) => errors.push(e));
  const a = fakeClaims('a', deletes);
  const b = fakeClaims('b', deletes);
  for (let i = 0; i < 40; i++) releases.add(i % 2 === 0 ? a : b, new Map([[`urn:x:${i}`, 7]]));
  releases.add(a, new Map());
  t.same(deletes, [], 'nothing sent while the writes land');
  await releases.flush();
  t.equal(deletes.length, 2, 'one delete per database');
  t.same(
    deletes.find((d) => d.db === 'a')?.ids,
    Array.from({ length: 20 }, (_, i) => `urn:x:${2 * i}\n7`),
    'every claim of that database, as `<id>\\n<version>`',
  );
  await releases.flush();
  t.equal(deletes.length, 2, 'a flush with nothing gathered sends nothing');
  t.same(errors, []);
});

t.test('a failed release goes to the error handler; later releases still go', async (t) => {
  const deletes: Array<{ db: string; ids: string[] }> = [];
  const errors: unknown[] = [];
  const releases = new ClaimReleases((e) => errors.push(e));
  releases.add(fakeClaims('a', deletes, true), new Map([['urn:x:1', 1]]));
  await releases.flush();
  t.match(errors, [{ message: 'server gone' }], 'the error reported, not thrown');
  releases.add(fakeClaims('a', deletes), new Map([['urn:x:2', 2]]));
  await releases.flush();
  t.same(deletes.at(-1), { db: 'a', ids: ['urn:x:2\n2'] });
});

t.test('500 gathered releases are sent without waiting for the timer', async (t) => {
  const deletes: Array<{ db: string; ids: string[] }> = [];
  const releases = new ClaimReleases(() => undefined);
  const a = fakeClaims('a', deletes);
  for (let i = 0; i < 500; i++) releases.add(a, new Map([[`urn:x:${i}`, 1]]));
  await new Promise((r) => setImmediate(r));
  t.equal(deletes.length, 1, 'sent at the bound');
  t.equal(deletes[0]!.ids.length, 500);
  await releases.flush();
});
