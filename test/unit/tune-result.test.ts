// tune-result.json (seed 001 §2.8) from measured runs: medians per row, vsDefault against reads + the system
// allocator, a row with a failed request or an unmeasured run never wins; and the file the image records from it.
import t from 'tap';
import { buildResult, summaryLine } from '../../tune/result.js';
import { recordLines } from '../../tune/record.js';
import { brokerArgs, type RunResult } from '../../tune/run-once.js';
import { parseWorkload } from '../../tune/workload.js';
import { better, knobs, trialCount } from '../../tune/train.js';

const run = (rps: number, failedRequests = 0, extra: Partial<RunResult> = {}): RunResult => ({
  rps,
  p99us: 1000,
  notified: 5,
  failedRequests,
  ...extra,
});
const SYS = { name: 'system' };
const JE = { name: 'jemalloc', library: '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2' };
const MI = { name: 'mimalloc', library: '/usr/lib/x86_64-linux-gnu/libmimalloc.so.2' };
const trained = {
  reads: { httpServer: 'uws' as const, connectionPoolSize: 1, maxSemiSpaceMb: 64 },
  writes: { httpServer: 'uws' as const },
};

t.test('the fastest row without failed requests wins; vsDefault against reads/system', async (t) => {
  const r = buildResult(
    [
      { lockPrefer: 'reads', allocator: SYS, runs: [run(100), run(110), run(90)] },
      { lockPrefer: 'reads', allocator: JE, runs: [run(120), run(130), run(125)] },
      { lockPrefer: 'writes', allocator: SYS, runs: [run(500), run(500, 1), run(500)] },
      { lockPrefer: 'writes', allocator: MI, runs: [run(900), run(0, 0, { error: 'the broker exited' }), run(900)] },
    ],
    trained,
  );
  t.same(
    r.table.map((x) => [x.dbLockPrefer, x.allocator, x.rps, x.failedRequests, x.vsDefault]),
    [
      ['reads', 'system', 100, 0, 1],
      ['reads', 'jemalloc', 125, 0, 1.25],
      ['writes', 'system', 500, 1, 5],
      ['writes', 'mimalloc', 900, 0, 9],
    ],
  );
  t.equal(r.table[0]!.runs.length, 3);
  t.same(Object.keys(r.table[0]!).sort(), [
    'allocator',
    'dbLockPrefer',
    'failedRequests',
    'notifiedPerRun',
    'p99us',
    'rps',
    'runs',
    'vsDefault',
  ]);
  t.same(r.best, {
    dbLockPrefer: 'reads',
    allocator: 'jemalloc',
    brokerOptions: { dbLockPrefer: 'reads', connectionPoolSize: 1, httpServer: 'uws' },
    env: { LD_PRELOAD: JE.library, NODE_OPTIONS: '--max-semi-space-size=64' },
    rps: 125,
    vsDefault: 1.25,
  });
  t.match(
    summaryLine(r, 'tune-result.json'),
    /^tune: best --dbLockPrefer reads --connectionPoolSize 1 --httpServer uws, allocator jemalloc/,
  );
});

t.test('no winner when every row failed; the system allocator is an empty LD_PRELOAD', async (t) => {
  const none = buildResult([{ lockPrefer: 'reads', allocator: SYS, runs: [run(100, 3)] }], trained);
  t.equal(none.best, null);
  t.match(summaryLine(none, 'x.json'), /no combination ran without failed requests/);
  t.throws(() => recordLines(none), /no winner/);
  const sys = buildResult([{ lockPrefer: 'writes', allocator: SYS, runs: [run(10)] }], trained);
  t.same(sys.best?.env, { LD_PRELOAD: '' });
  t.equal(sys.best?.vsDefault, null, 'no reads/system row to compare with');
});

t.test('the recorded file: TUNE_DBLOCKPREFER, TUNE_ALLOCATOR and the trained options, shell-safe', async (t) => {
  const r = buildResult([{ lockPrefer: 'reads', allocator: MI, runs: [run(100)] }], trained);
  t.same(recordLines(r).slice(1), [
    "TUNE_DBLOCKPREFER='reads'",
    "TUNE_ALLOCATOR='mimalloc'",
    "TUNE_CONNECTIONPOOLSIZE='1'",
    "TUNE_HTTPSERVER='uws'",
    "TUNE_NODE_OPTIONS='--max-semi-space-size=64'",
  ]);
  r.best!.brokerOptions.httpServer = "uws'; rm -rf /";
  t.throws(() => recordLines(r), /unexpected characters/);
  r.best!.brokerOptions.httpServer = 'uws';
  r.best!.allocator = 'tcmalloc';
  t.throws(() => recordLines(r), /unknown allocator/);
});

t.test('training: a change is kept only when faster by the margin and without failures', async (t) => {
  t.ok(better(run(110), run(100)));
  t.notOk(better(run(101), run(100)), 'within the noise margin');
  t.notOk(better(run(200, 1), run(100)), 'failed requests never win');
  t.ok(better(run(50), run(100, 2)), 'anything clean beats a failing profile');
  t.ok(better(run(50), run(0, 0, { error: 'x' })));
  t.equal(trialCount(knobs(2)), 8, 'defaults, threads 0 and 1, two semi-space, two old-space sizes, the other server');
  t.same(
    knobs(8)[0]!
      .variants({ httpServer: 'uws' })
      .map((p) => p.connectionPoolSize),
    [0, 1, 4],
  );
});

t.test("a run's broker command line: the store's options, the lock preference on embdb only, the profile", async (t) => {
  const spec = { lockPrefer: 'writes' as const, profile: { httpServer: 'node' as const, connectionPoolSize: 0 } };
  const embdb = brokerArgs(parseWorkload({ store: { history: 'embdb' } }), spec, '/tmp/x', 'abcx1');
  t.match(embdb.join(' '), /--database embdb --troe embdb --dbLockPrefer writes --dbDir \/tmp\/x --connectionPoolSize 0 --httpServer node/);
  const docdb = brokerArgs(parseWorkload({ store: { database: 'docdb' } }), spec, undefined, '2ioo0xzzz');
  t.notOk(docdb.includes('--dbLockPrefer'), 'docdb has no lock preference');
  const name = docdb[docdb.indexOf('--dbName') + 1]!;
  t.ok(name.length <= 12, `docdb's --dbName ${name} fits its 12 characters`);
});
