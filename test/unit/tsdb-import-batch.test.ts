// The tsdb history's import batch (plugins/history/tsdb/import-batch.ts) against a stand-in QuestDB: one ILP request
// per table (each one QuestDB commit), instances first; when the entity rows' request fails, the instances QuestDB
// already committed are written again as retracted (gone) over their dedup keys, and the batch is refused.
import t from 'tap';
import { createServer, type IncomingMessage } from 'node:http';
import { importBatch } from '../../src/plugins/history/tsdb/import-batch.js';
import { settingsOf } from '../../src/plugins/history/tsdb/settings.js';
import type { ImportedHistoryRecord } from '../../src/history/contract.js';

const T0 = '2023-11-14T22:13:20.123Z';
const ID = 'urn:ngsi-ld:Thing:1';
const batch: ImportedHistoryRecord[] = [
  { kind: 'entity', tenant: '', id: ID, type: ['https://example.org/Thing'], event: { kind: 'created', at: T0 } },
  ...[1, 2].map((n): ImportedHistoryRecord => ({
    kind: 'instance',
    tenant: '',
    id: ID,
    type: ['https://example.org/Thing'],
    attrIri: 'https://example.org/n',
    instance: { type: 'Property', value: n, instanceId: `urn:ngsi-ld:attribute:instance:u${n}`, createdAt: T0, modifiedAt: T0 },
  })),
];

/** A stand-in QuestDB: SQL answers no rows; ILP writes are kept, and `refuse` says which to answer 400. */
async function standIn(
  t: { teardown(fn: () => unknown): void },
  refuse: (body: string) => boolean,
): Promise<{ port: number; writes: Array<{ body: string; refused: boolean }> }> {
  const writes: Array<{ body: string; refused: boolean }> = [];
  const server = createServer((req: IncomingMessage, res) => {
    const url = new URL(req.url ?? '', 'http://x');
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (url.pathname === '/write') {
        const refused = refuse(body);
        writes.push({ body, refused });
        if (refused)
          res
            .writeHead(400, { 'content-type': 'application/json' })
            .end(JSON.stringify({ code: 'invalid', message: 'refused by the test' }));
        else res.writeHead(204).end();
        return;
      }
      const query = url.searchParams.get('query') ?? '';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(query.startsWith('CREATE') ? { ddl: 'OK' } : { columns: [], dataset: [] }));
    });
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  t.teardown(() => new Promise<void>((res) => server.close(() => res())));
  return { port: (server.address() as { port: number }).port, writes };
}

t.test('a batch is one request per table, instances first', async (t) => {
  const q = await standIn(t, () => false);
  const out = await importBatch(settingsOf({ troePort: q.port, troeName: 'imp' }), batch);
  t.same(out, {});
  t.equal(q.writes.length, 2);
  t.match(q.writes[0]!.body, /^imp_inst_v2_d,/);
  t.notMatch(q.writes[0]!.body, /imp_ent_d/, 'one table per request');
  t.equal(q.writes[0]!.body.trim().split('\n').length, 2, 'both instances in the one request');
  t.match(q.writes[1]!.body, /^imp_ent_d,entity=urn:ngsi-ld:Thing:1,kind=created /);
});

t.test("the entity rows refused: the instances' commit is undone and the batch refused", async (t) => {
  const q = await standIn(t, (body) => body.startsWith('imp_ent_d'));
  const out = await importBatch(settingsOf({ troePort: q.port, troeName: 'imp' }), batch);
  t.match(out.refused, /^QuestDB failed: /);
  t.equal(q.writes.length, 3, 'instances, entity rows (refused), instances undone');
  const [first, , undo] = q.writes;
  t.match(first!.body, /gone=f/);
  t.notMatch(first!.body, /gone=t/);
  t.equal(undo!.refused, false);
  t.equal(undo!.body.trim().split('\n').length, 2);
  t.notMatch(undo!.body, /gone=f/);
  // The same rows (table, timestamp, instanceId): QuestDB's dedup keys put the retracted version in their place.
  const keys = (body: string): string[] =>
    body
      .trim()
      .split('\n')
      .map((l) => `${/iid="([^"]+)"/.exec(l)![1]} ${l.split(' ').at(-1)}`);
  t.same(keys(undo!.body), keys(first!.body));
});

t.test('QuestDB away: an error (the history refuses the batch with it), nothing claimed written', async (t) => {
  await t.rejects(importBatch(settingsOf({ troePort: 1, troeName: 'imp' }), batch), /cannot be reached/);
});

t.test('an instance observed after 2262: its designated timestamp in µs, which QuestDB holds (the ns it had overflowed)', async (t) => {
  const q = await standIn(t, () => false);
  const late = batch.map((r) =>
    r.kind === 'instance' ? { ...r, instance: { ...r.instance, observedAt: '2300-01-01T00:00:00.000Z' } } : r,
  );
  t.same(await importBatch(settingsOf({ troePort: q.port, troeName: 'imp' }), late), {});
  const lines = q.writes[0]!.body.split('\n').filter((l) => l !== '');
  t.equal(lines.length, 2);
  for (const l of lines) t.match(l, /,observed_at=10413792000000000t,.* 10413792000000000t$/);
});
