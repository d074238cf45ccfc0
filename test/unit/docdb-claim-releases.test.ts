// The releases of docdb's write claims on FerretDB (claims.ts ClaimReleases): gathered per database and sent as one
// delete, not one per write; in order; each held HOLD_MS after its write; an error goes to the handler, never to the
// writer.
import t from 'tap';
import type { Collection } from 'mongodb';
import { ClaimReleases, HOLD_MS, type ClaimDoc } from '../../src/plugins/store/docdb/claims.js';

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

t.test('a release is held HOLD_MS after its write, however many are gathered (a claimed write goes by _id alone)', async (t) => {
  const deletes: Array<{ db: string; ids: string[] }> = [];
  let now = 1000;
  const releases = new ClaimReleases(
    () => undefined,
    () => now,
  );
  const a = fakeClaims('a', deletes);
  for (let i = 0; i < 600; i++) releases.add(a, new Map([[`urn:x:${i}`, 1]]));
  now += HOLD_MS / 2;
  releases.add(a, new Map([['urn:x:late', 1]]));
  await new Promise((r) => setImmediate(r));
  await releases.sendRipe();
  t.same(deletes, [], 'nothing sent before HOLD_MS, not even 600 of them');
  now += HOLD_MS / 2;
  await releases.sendRipe();
  t.same(
    deletes.map((d) => d.ids.length),
    [500, 100],
    'the 600 ripe ones, at most 500 to a delete',
  );
  t.notOk(
    deletes.some((d) => d.ids.includes('urn:x:late\n1')),
    'the one added later still held',
  );
  let waited = false;
  const ripe = releases.ripe().then(() => (waited = true));
  now += HOLD_MS;
  await ripe;
  t.ok(waited, 'ripe() resolves once the last one held is ripe');
  await releases.flush();
  t.same(deletes.at(-1)?.ids, ['urn:x:late\n1'], 'flush sends the rest');
});
