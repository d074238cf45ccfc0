// The benchmark harness in CI: `node dist/bench/run.js --smoke --duration 1.5` runs every scenario for a second and a
// half against the bare server and the default broker (the wiring of each, not its speed), and every request must
// succeed. No timing is asserted (half a second completed no request at all on a loaded machine).
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoPath } from '../helpers/repo.js';

const RUN = repoPath('dist/bench/run.js');

interface SmokeRow {
  scenario: string;
  variant: string;
  result?: { errors: number; non2xx: number; completed: number };
  notes: string[];
}

function runSmoke(jsonPath: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [RUN, '--smoke', '--duration', '1.5', '--json', jsonPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    proc.stdout.on('data', (d) => {
      output += String(d);
    });
    proc.stderr.on('data', (d) => {
      output += String(d);
    });
    proc.on('exit', (code) => resolve({ code, output }));
  });
}

t.test('the smoke run of every scenario answers every request with 2xx and exits 0', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const jsonPath = join(dir, 'rows.json');
  const { code, output } = await runSmoke(jsonPath);
  t.equal(code, 0, 'exit code', { output });
  const { info, rows } = JSON.parse(readFileSync(jsonPath, 'utf8')) as {
    info: { scenarios: string[]; variants: string[] };
    rows: SmokeRow[];
  };
  t.same(info.variants, ['uws-pool'], 'smoke measures the default broker variant only');
  t.ok(info.scenarios.length > 0, 'scenarios ran');
  for (const scenario of info.scenarios) {
    for (const variant of ['bare-uws', ...info.variants]) {
      const row = rows.find((r) => r.scenario === scenario && r.variant === variant);
      t.ok(row?.result, `${scenario} on ${variant} was measured`, { notes: row?.notes });
      t.ok((row?.result?.completed ?? 0) > 0, `${scenario} on ${variant} completed requests`);
      t.equal((row?.result?.errors ?? -1) + (row?.result?.non2xx ?? -1), 0, `${scenario} on ${variant} has zero errors`, {
        notes: row?.notes,
      });
      t.match(output, new RegExp(`^\\s*${scenario}\\s+${variant}\\s+\\d+`, 'm'), `the printed table has ${scenario} on ${variant}`);
    }
  }
});
