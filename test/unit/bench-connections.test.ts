// run.js --docdb (make bench) runs batch-upsert and query-type at fewer connections than its other rows (FerretDB
// cannot serve them at 50 within a row): the report says so in the row and in the run's header line.
import t from 'tap';
import { databaseLines, markdownReport, scenarioLabel, type Row, type RunInfo } from '../../bench/report.js';
import { DOCDB_CONNECTIONS, DOCDB_MAKE_ROWS } from '../../bench/variants.js';

const row = (scenario: string, variant: string, connections?: number): Row =>
  ({
    scenario,
    variant,
    rounds: 1,
    notes: [],
    connections,
    result: { requestsPerSecond: 4, p50Ms: 900, p99Ms: 1500, completed: 8, errors: 0, timeouts: 0, non2xx: 0, statusCodes: {} },
    cpu: {
      frontUs: 2000,
      pipelineUs: 50000,
      otherUs: 0,
      pipelineThreads: 1,
      serverCores: 0.2,
      loadGeneratorCores: 0,
      databaseUs: { FerretDB: 100000 },
    },
  }) as Row;

t.test('make bench has all five docdb rows, the two FerretDB cannot serve at 50 connections at fewer', async (t) => {
  t.same(DOCDB_MAKE_ROWS, ['retrieve', 'create', 'patch', 'batch-upsert', 'query-type']);
  t.same(Object.keys(DOCDB_CONNECTIONS).sort(), ['batch-upsert', 'query-type']);
  t.ok(
    Object.values(DOCDB_CONNECTIONS).every((n) => Number.isInteger(n) && n >= 1 && n < 50),
    "fewer than the run's 50",
  );
});

t.test('a row at other connections than the run says how many', async (t) => {
  t.equal(scenarioLabel({ scenario: 'retrieve' }), 'retrieve', "at the run's connections: the name alone");
  t.equal(scenarioLabel({ scenario: 'batch-upsert', connections: 4 }), 'batch-upsert (4 conn.)');
  t.same(databaseLines([row('batch-upsert', 'docdb-pg-pool', 4)])!.lines[0]!.slice(0, 2), ['batch-upsert (4 conn.)', 'docdb-pg-pool']);
  const info: RunInfo = {
    command: 'node dist/bench/run.js --docdb',
    startedAt: new Date(0),
    loadAverage: { start: [1, 1, 1] },
    rounds: 1,
    durationS: 2,
    warmupS: 0.5,
    connections: 50,
    connectionsOf: { 'batch-upsert': 4, 'query-type': 4 },
    scenarios: [],
    variants: [],
    placement: { cores: 2, pinned: false },
    exitCodes: {},
  };
  const md = markdownReport([row('retrieve', 'uws-pool'), row('batch-upsert', 'uws-pool', 4)], info);
  t.match(md, /autocannon 50 connections \(batch-upsert and query-type at 4: the bare server and every variant alike\)/);
  t.match(md, /\| batch-upsert \(4 conn\.\) \| uws-pool \|/);
  t.match(md, /\| retrieve \| uws-pool \|/);
  t.notMatch(markdownReport([row('retrieve', 'uws-pool')], { ...info, connectionsOf: {} }), /at 4/, 'none: nothing said');
});
