// History is a plugin category (issue 14 item 3): `--troe <plugin>` loads a history beside the store, which declares
// its own options and receives every committed entity write as a write event, in commit order, from every pipeline
// thread; the temporal API goes to it. `--troe tsdb` is the QuestDB one (tsdb-*.test.ts).
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, runBroker, runBrokerHere, call, NGSI } from './helpers/broker.js';
import { repoPath } from '../helpers/repo.js';

const RECORDER = repoPath('test/fixtures/history/recorder.js');
const ID = 'urn:ngsi-ld:Car:1';

interface Line {
  opened?: string;
  closed?: boolean;
  addInstances?: string;
  tenant?: string;
  id?: string;
  seq?: number;
  kind?: string;
  created?: string[];
  modified?: string[];
  deleted?: string[];
  written?: Record<string, string[]>;
  event?: string;
  instances?: Array<[string, unknown]>;
}

function lines(file: string): Line[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);
}

const short = (iri: string): string => iri.slice(iri.lastIndexOf('/') + 1);

t.test('-u lists the options of the history plugin --troe names', async (t) => {
  const r = await runBroker(['-u', '--troe', RECORDER]);
  t.equal(r.code, 0);
  t.match(r.stdout, '--recorderFile');
  t.match(r.stdout, /--troe\s+none\|embdb\|tsdb\|<plugin>\s.*tsdb \(QuestDB beside the store.*\(default: none\)/);
  t.match(r.stdout, '--dbDir', "and the store plugin's");
});

t.test('a history beside the store gets each committed write, with what it changed, in order', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'history-beside-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'events.jsonl');
  // --frontOps cheap: the writes below run on the front thread's own pipeline, which opens the history as a thread.
  const broker = await startBroker(['--troe', RECORDER, '--recorderFile', file, '--connectionPoolSize', '2', '--frontOps', 'cheap']);
  const created = await call(broker, 'POST', `${NGSI}/entities`, {
    body: { id: ID, type: 'Car', speed: { type: 'Property', value: 1 }, owner: { type: 'Relationship', object: 'urn:p:1' } },
  });
  t.equal(created.status, 201);
  t.equal((await call(broker, 'PATCH', `${NGSI}/entities/${ID}/attrs`, { body: { speed: { type: 'Property', value: 2 } } })).status, 204);
  t.equal(
    (await call(broker, 'POST', `${NGSI}/entities/${ID}/attrs`, { body: { fuel: { type: 'Property', value: 9, datasetId: 'urn:d:1' } } }))
      .status,
    204,
  );
  t.equal(
    (await call(broker, 'PUT', `${NGSI}/entities/${ID}`, { body: { type: 'Car', speed: { type: 'Property', value: 3 } } })).status,
    204,
  );
  t.equal(
    (
      await call(broker, 'POST', `${NGSI}/entityOperations/upsert`, {
        body: [{ id: 'urn:ngsi-ld:Car:2', type: 'Car', speed: { type: 'Property', value: 7 } }],
      })
    ).status,
    201,
  );
  t.equal((await call(broker, 'DELETE', `${NGSI}/entities/${ID}`)).status, 204);
  // A refused write is no event: the entity does not exist.
  t.equal((await call(broker, 'PATCH', `${NGSI}/entities/${ID}/attrs`, { body: { speed: { type: 'Property', value: 4 } } })).status, 404);
  t.equal(await broker.stop(), 0);

  const all = lines(file);
  t.same(
    all
      .filter((l) => l.opened !== undefined)
      .map((l) => l.opened)
      .sort(),
    ['primary', 'thread', 'thread', 'thread'],
    'opened by the front, then by its inline pipeline and each of the two pipeline threads',
  );
  t.ok(
    all.some((l) => l.closed),
    'closed at exit',
  );
  const writes = all.filter((l) => l.kind !== undefined);
  t.same(
    writes.map((l) => [l.id, l.kind]),
    [
      [ID, 'create'],
      [ID, 'update'],
      [ID, 'append'],
      [ID, 'replace'],
      ['urn:ngsi-ld:Car:2', 'create'],
      [ID, 'delete'],
    ],
    'every write, once, in the order they were made',
  );
  const [create, update, append, replace, , del] = writes as [Line, Line, Line, Line, Line, Line];
  t.same(create.created!.map(short).sort(), ['owner', 'speed']);
  t.same(create.instances!.map(([a, v]) => [short(a), v]).sort(), [
    ['owner', 'urn:p:1'],
    ['speed', 1],
  ]);
  t.same(
    [update.modified!.map(short), update.instances!.map(([a, v]) => [short(a), v])],
    [['speed'], [['speed', 2]]],
    'the updated instance only',
  );
  t.same(
    Object.entries(append.written!).map(([a, k]) => [short(a), k]),
    [['fuel', ['urn:d:1']]],
  );
  t.equal(replace.event, 'replaced', "a replace is the history's replaced event");
  t.same(replace.deleted!.map(short).sort(), ['fuel', 'owner']);
  t.same(del.event, 'deleted');
  t.same(
    del.instances!.map(([a, v]) => [short(a), v]),
    [['speed', 'urn:ngsi-ld:null']],
    'a tombstone per instance',
  );
  const seqs = writes.filter((l) => l.id === ID).map((l) => l.seq!);
  t.same(
    seqs,
    [...seqs].sort((a, b) => a - b),
    'the writes of one entity in seq order',
  );
});

t.test('the temporal API goes to the history beside the store; its temporal create registers the tenant in the store', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'history-beside-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'events.jsonl');
  const broker = await startBroker(['--troe', RECORDER, '--recorderFile', file, '--connectionPoolSize', '1']);
  const tenant = { 'NGSILD-Tenant': 'beside' };
  t.equal((await call(broker, 'GET', `${NGSI}/entities?type=Car`, { headers: tenant })).status, 404, 'no such tenant yet');
  const r = await call(broker, 'POST', `${NGSI}/temporal/entities`, {
    headers: tenant,
    body: { id: ID, type: 'Car', speed: [{ type: 'Property', value: 1, observedAt: '2024-01-01T00:00:00Z' }] },
  });
  t.equal(r.status, 201);
  t.equal((await call(broker, 'GET', `${NGSI}/entities?type=Car`, { headers: tenant })).status, 200, 'the tenant exists now');
  t.equal(
    (await call(broker, 'GET', `${NGSI}/temporal/entities/${ID}`, { headers: tenant })).status,
    404,
    'the recorder keeps nothing to read',
  );
  t.equal(await broker.stop(), 0);
  t.same(
    lines(file)
      .filter((l) => l.addInstances !== undefined)
      .map((l) => [l.addInstances, l.tenant]),
    [[ID, 'beside']],
  );
});

t.test('a history that cannot keep a write: the write stands, the loss is logged', async (t) => {
  // Its record rejects, or throws before returning anything (a history that queues at once returns no promise).
  for (const fail of ['--recorderFail', '--recorderThrow']) {
    const broker = await startBroker(['--troe', RECORDER, fail, '--connectionPoolSize', '1']);
    t.equal(
      (await call(broker, 'POST', `${NGSI}/entities`, { body: { id: ID, type: 'Car', speed: { type: 'Property', value: 1 } } })).status,
      201,
      fail,
    );
    t.equal((await call(broker, 'GET', `${NGSI}/entities/${ID}`)).status, 200, fail);
    t.equal(await broker.stop(), 0, fail);
    t.match(broker.logs.join('\n'), /"level":50.*the history beside the store lost a committed write/, fail);
  }
});

t.test('bad tsdb options, an unknown history and embdb without its store are refused at start with one line', async (t) => {
  for (const [args, message] of [
    [['--troe', 'tsdb', '--troeName', 'bad-name'], /--troeName: 'bad-name' is not 1 to 40 letters, digits or '_'/],
    [['--troe', 'tsdb', '--troePwd', 'secret'], /--troePwd needs --troeUser/],
    [['--troe', 'tsdb', '--troeHost', 'a b'], /--troeHost: 'a b' is not a host name or address/],
    [['--troe', 'tsdb', '--troePort', '70000'], /--troePort: 70000 is not a port/],
    [['--troe', 'nothing-here'], /history plugin 'nothing-here' cannot be loaded/],
    [['--troe', 'embdb', '--database', 'docdb'], /--troe embdb: that history lives inside the embdb store; it needs --database embdb/],
  ] as Array<[string[], RegExp]>) {
    const r = await runBrokerHere(args); // -u above is the spawned command; these as main.ts runs them, in this process
    t.equal(r.code, 1, args.join(' '));
    t.equal(r.stderr.trim().split('\n').length, 1, `one line for ${args.join(' ')}`);
    t.match(r.stderr, message);
  }
});
