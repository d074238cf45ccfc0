// SLOW (about 30 s on a quiet machine: 12 brokers started one after the other; the training tries the pipeline threads
// only): `make tune` end to end on a tiny workload, every run and the training a quarter of a second after a 0.1 s
// warm-up (1 s runs cost 38 CPU-s, 0.5 s runs 22, these 15-18, most of it the brokers' starts; the wiring checked is
// the same). The result file must have §2.8's shape and a winner that had no failed request; its subscriptions must
// have been notified.
// No speed is asserted: only that the tuner's wiring holds.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TuneResult } from '../../tune/result.js';
import { repoPath } from '../helpers/repo.js';

const TUNE = repoPath('dist/tune/tune.js');
const TYPE = 'https://example.org/Sensor';

t.setTimeout(600_000);

t.test('a short tune writes tune-result.json with a winner that had no failed requests', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tune-short-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const workload = join(dir, 'w.json');
  writeFileSync(
    workload,
    JSON.stringify({
      entities: {
        count: 40,
        types: [
          { type: TYPE, attributes: [{ name: 'https://example.org/temp', value: 20, observedAt: true, subAttributes: 1 }] },
          {
            type: 'https://example.org/Room',
            attributes: [
              { name: 'https://example.org/name', value: 'r' },
              { name: 'https://example.org/at', type: 'GeoProperty' },
            ],
          },
        ],
      },
      subscriptions: [{ count: 2, select: 'byType', type: TYPE }],
      load: {
        concurrency: 4,
        mix: { patch: 2, retrieve: 1, query: 1, create: 1 },
        query: { type: TYPE, q: 'https://example%2Eorg/temp>25' },
      },
      duration: '250ms',
    }),
  );
  const out = join(dir, 'tune-result.json');
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const proc = spawn(process.execPath, [TUNE, workload, '--out', out], {
      env: { ...process.env, TUNE_REPEATS: '1', TUNE_TRAIN_DURATION: '0.25', TUNE_WARMUP: '0.1', TUNE_TRAIN_KNOBS: 'connectionPoolSize' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let so = '';
    let se = '';
    proc.stdout.on('data', (d) => (so += String(d)));
    proc.stderr.on('data', (d) => (se += String(d)));
    proc.on('exit', (c) => resolve({ code: c, stdout: so, stderr: se }));
  });
  t.equal(code, 0, 'exit 0: a winner', { stderr });
  t.match(stdout, /^tune: best --dbLockPrefer (reads|writes) .*req\/s/, 'one summary line on stdout');
  t.equal(stdout.trim().split('\n').length, 1);
  t.match(stderr, /tune: run 1 of \d+: .*left/, 'progress: which run of how many and the time left');
  t.notMatch(stderr, /load\.query answers/, 'the query answers entities');
  const r = JSON.parse(readFileSync(out, 'utf8')) as TuneResult;
  t.same(Object.keys(r).sort(), ['best', 'table']);
  t.ok(r.best, 'a winner');
  const b = r.best!;
  t.same(Object.keys(b).sort(), ['allocator', 'brokerOptions', 'dbLockPrefer', 'env', 'rps', 'vsDefault']);
  const row = r.table.find((x) => x.dbLockPrefer === b.dbLockPrefer && x.allocator === b.allocator)!;
  t.equal(row.failedRequests, 0, 'the winner had no failed request');
  t.ok(row.rps > 0 && b.rps === row.rps);
  t.ok(
    r.table.some((x) => x.dbLockPrefer === 'reads' && x.allocator === 'system' && x.vsDefault === 1),
    'reads/system is the reference',
  );
  t.same([...new Set(r.table.map((x) => x.dbLockPrefer))].sort(), ['reads', 'writes']);
  t.ok(
    r.table.every((x) => x.runs.length === 1 && x.notifiedPerRun > 0),
    'one run each; the subscriptions notified the receiver',
  );
  t.equal(b.brokerOptions.dbLockPrefer, b.dbLockPrefer);
  t.type(b.env.LD_PRELOAD, 'string');
});
