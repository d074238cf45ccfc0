// What one history row costs QuestDB (issue 18: the write ratio of --troe tsdb) by how many rows go in one ILP-over-HTTP
// request: QuestDB's CPU (/proc of its java process, WAL apply included: the run waits until the rows are applied)
// and this process's (the client's encoding and HTTP), per row, at 1, 100, 1,000 and 10,000 rows per request.
// The rows are the writer's (writer.ts writeInst) for a PATCH of one attribute.
// Run: QDB_PROFILE=full bash test/services/questdb.sh && npm run build && node dist/bench/micro/questdb-ilp-cost.js [--rows 20000]
//   [--sizes 1,100,1000,10000] [--table writer|nodedup|noindex]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { instRow, tableDdl } from '../../src/plugins/history/tsdb/rows.js';
import { exec } from '../../src/plugins/history/tsdb/sql.js';
import type { TsdbSettings } from '../../src/plugins/history/tsdb/settings.js';
import { newSender, waitApplied, writeInst } from '../../src/plugins/history/tsdb/writer.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    sizes: { type: 'string', default: '1,100,1000,10000' },
    // What the table's layout costs: the writer's table, or the same without its dedup keys or its entity index.
    table: { type: 'string', default: 'writer' },
  },
});
const LAYOUTS: Record<string, (ddl: string) => string> = {
  writer: (d) => d,
  nodedup: (d) => d.replace(/ DEDUP UPSERT KEYS\(.*\)$/, ''),
  noindex: (d) => d.replace('entity SYMBOL INDEX', 'entity SYMBOL'),
};
const layout = LAYOUTS[values.table];
if (layout === undefined) throw new Error(`--table: one of ${Object.keys(LAYOUTS).join(', ')}`);
const TOTAL = Number(values.rows);
const SIZES = values.sizes.split(',').map(Number);

const PIDFILE = fileURLToPath(new URL('../../../.services/questdb/questdb.pid', import.meta.url));
const qdbPid = Number(readFileSync(PIDFILE, 'utf8').trim());
const TICK_US = 1e6 / 100;

/** utime + stime of the whole java process, µs. */
function qdbCpuUs(): number {
  const stat = readFileSync(`/proc/${qdbPid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_US;
}

const s: TsdbSettings = { host: '127.0.0.1', port: Number(process.env.QDB_HTTP_PORT ?? 59000), name: 'ilpcost', buffer: 1e6 };
const NS = 'https://example.org/ns/';

async function run(perRequest: number): Promise<void> {
  const table = `ilpcost_inst_${perRequest}_${Date.now()}`;
  const [ddl] = tableDdl(table, `${table}_e`);
  await exec(s, layout(ddl!));
  const sender = await newSender(s, 1000);
  const t0 = Date.now();
  const q0 = qdbCpuUs();
  const c0 = process.cpuUsage();
  for (let i = 0; i < TOTAL; i += perRequest) {
    for (let k = i; k < Math.min(TOTAL, i + perRequest); k++) {
      const at = new Date(t0 + k).toISOString();
      const h = {
        type: 'Property' as const,
        value: k % 40,
        createdAt: at,
        modifiedAt: at,
        instanceId: `urn:ngsi-ld:attribute:instance:${k}`,
      };
      await writeInst(sender, table, instRow(`urn:ngsi-ld:Bench:${k % 1000}`, `${NS}temperature`, h));
    }
    await sender.flush();
  }
  await waitApplied(s, [table]);
  const c = process.cpuUsage(c0);
  const q = qdbCpuUs() - q0;
  const ms = Date.now() - t0;
  await sender.close();
  await exec(s, `DROP TABLE ${table}`);
  process.stdout.write(
    `${String(perRequest).padStart(6)} rows/request: QuestDB ${(q / TOTAL).toFixed(1).padStart(7)} µs/row, client ` +
      `${((c.user + c.system) / TOTAL).toFixed(1).padStart(6)} µs/row, ${((TOTAL / ms) * 1000).toFixed(0)} rows/s\n`,
  );
}

process.stdout.write(`${TOTAL} rows each, table ${values.table}, QuestDB pid ${qdbPid}\n`);
for (const n of SIZES) await run(n);
