// The tsdb writer's search for the lines QuestDB refuses (src/plugins/history/tsdb/refusals.ts): against the real
// QuestDB (test/services/questdb.sh) with refused lines among good ones in one request, and against a stand-in that
// refuses without naming a line (split in halves); what the warn line shows of a refused line is capped and escaped.
import t from 'tap';
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { RefusalWarns, describe, itemsOf, refusedStatus, shown, writeFinding, type Item } from '../../src/plugins/history/tsdb/refusals.js';
import { questDbPort } from '../api/helpers/troe.js';
import type { TsdbSettings } from '../../src/plugins/history/tsdb/settings.js';

const settings = (port: number): TsdbSettings => ({ host: '127.0.0.1', port, name: 'x', buffer: 1000 });

t.test('real QuestDB: refused lines are found and returned, every other line of the request is written', async (t) => {
  const port = questDbPort();
  const table = `refusals_${randomBytes(4).toString('hex')}`;
  const sql = async (query: string): Promise<{ dataset?: unknown[][] }> =>
    (await (await fetch(`http://127.0.0.1:${port}/exec?query=${encodeURIComponent(query)}`)).json()) as { dataset?: unknown[][] };
  await sql(`CREATE TABLE ${table} (ts TIMESTAMP, e SYMBOL, n DOUBLE) TIMESTAMP(ts) PARTITION BY DAY WAL`);
  t.teardown(() => sql(`DROP TABLE IF EXISTS ${table}`));
  const good = (i: number): string => `${table},e=ok${i} n=${i} ${1_700_000_000_000 + i}000000\n`;
  // A time past what a ns timestamp holds, and a string in a DOUBLE column: both refused by QuestDB (400).
  const late = `${table},e=late n=1 10413792000000000000\n`;
  const typed = `${table},e=typed n="five" 1700000000000000000\n`;
  const lines = [good(1), late, good(2), good(3), typed, good(4), good(5), good(6), late, good(7)];
  const items = itemsOf([
    { tenant: 'a', lines: lines.slice(0, 5).join('') },
    { tenant: 'b', lines: lines.slice(5).join('') },
  ]);
  t.equal(items.length, 10, 'one item per line');
  const refused = await writeFinding(settings(port), items);
  t.same(
    refused.map((r) => [r.tenant, r.line]),
    [
      ['a', late],
      ['a', typed],
      ['b', late],
    ],
    'the three refused lines, with their tenant',
  );
  t.match(refused[0]!.message, /timestamp/i);
  t.match(refused[1]!.message, /cast error/i);
  let rows: unknown[][] = [];
  for (let i = 0; i < 200; i++) {
    rows = (await sql(`SELECT e FROM ${table} ORDER BY e`)).dataset ?? [];
    if (rows.length >= 7) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  t.same(
    rows.map((r) => r[0]),
    ['ok1', 'ok2', 'ok3', 'ok4', 'ok5', 'ok6', 'ok7'],
    'every good line is written',
  );
  t.same(await writeFinding(settings(port), []), [], 'nothing to send: no request');
});

t.test('a refusal that names no line is split in halves; QuestDB away throws (the batch is kept)', async (t) => {
  const bodies: string[] = [];
  let away = false;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      if (away) return void res.writeHead(503).end();
      if (body.includes('bad')) return void res.writeHead(400).end('not json');
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as { port: number }).port;
  const items: Item[] = ['g1', 'g2', 'bad1', 'g3', 'g4', 'g5', 'bad2', 'g6'].map((l) => ({ tenant: 't', line: `${l}\n` }));
  const refused = await writeFinding(settings(port), items);
  t.same(
    refused.map((r) => [r.line, r.message]),
    [
      ['bad1\n', 'QuestDB answered 400'],
      ['bad2\n', 'QuestDB answered 400'],
    ],
  );
  const written = bodies.filter((b) => !b.includes('bad')).join('');
  t.same(written.split('\n').filter(Boolean).sort(), ['g1', 'g2', 'g3', 'g4', 'g5', 'g6'], 'each good line written once');
  away = true;
  await t.rejects(writeFinding(settings(port), items), /503/, 'unavailable is not a refusal');
});

t.test("the transport's errors: 400 and 413 refuse the request's lines; anything else is QuestDB away", async (t) => {
  t.ok(refusedStatus(new Error('HTTP request failed, statusCode=400, error=')));
  t.ok(refusedStatus(new Error('HTTP request failed, statusCode=413, error=')));
  for (const s of [401, 403, 404, 500, 503]) t.notOk(refusedStatus(new Error(`HTTP request failed, statusCode=${s}, error=`)), String(s));
  t.notOk(refusedStatus(new Error('connect ECONNREFUSED 127.0.0.1:9000')));
  t.notOk(refusedStatus('statusCode=400'), 'not an Error');
});

t.test("what a warn line shows of a refused line: the table, the client's entity and QuestDB's message, capped and escaped", async (t) => {
  const entity = `urn:x:${'y'.repeat(500)}`;
  const o = describe({
    tenant: 'te\nnant',
    line: `ldb_inst_v2_d,entity=urn:a\\,b\\ c,attr=v n=1 0\n`,
    message: `bad\n\u0000${'m'.repeat(1000)}`,
  });
  t.equal(o.table, 'ldb_inst_v2_d');
  t.equal(o.entity, 'urn:a,b c', 'the ILP escapes undone');
  t.equal(o.tenant, 'te\\u000anant', 'control characters shown, not written');
  t.ok((o.err as string).startsWith('bad\\u000a\\u0000m'));
  t.ok((o.err as string).length <= 301, 'capped');
  t.equal(describe({ tenant: '', line: `t,entity=${entity} n=1 0\n`, message: '' }).entity, `${entity.slice(0, 200)}…`);
  t.equal(shown('plain'), 'plain');
});

t.test('warn lines of refused rows are bounded per minute: 3 logged, one notice, then quiet until the minute ends', async (t) => {
  let now = 1_000_000;
  const warns = new RefusalWarns(3, () => now);
  const said = (n: number): string[] => Array.from({ length: n }, () => warns.next());
  t.same(said(6), ['log', 'log', 'log', 'notice', 'quiet', 'quiet']);
  now += 59_999;
  t.same(said(1), ['quiet'], 'the same minute');
  now += 1;
  t.same(said(5), ['log', 'log', 'log', 'notice', 'quiet'], 'the next minute');
});
