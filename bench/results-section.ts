// The benchmarks that run on their own (query-store, temporal, subscriptions) each own one marked section of
// bench/RESULTS.md: a run replaces its section between its markers and leaves the rest of the file as it was.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

export const RESULTS = fileURLToPath(new URL('../../bench/RESULTS.md', import.meta.url));

/** The markers of section `name`: `<!-- name:begin -->` and `<!-- name:end -->`. */
export const sectionMarkers = (name: string): { begin: string; end: string } => ({
  begin: `<!-- ${name}:begin -->`,
  end: `<!-- ${name}:end -->`,
});

/** Prints `body` (which starts with the begin marker and ends with the end marker) and puts it in `out`. */
export function writeResultsSection(name: string, body: string, out: string = RESULTS): void {
  const { begin, end } = sectionMarkers(name);
  process.stdout.write(body + '\n');
  const previous = existsSync(out) ? readFileSync(out, 'utf8') : '';
  const i = previous.indexOf(begin);
  const j = previous.indexOf(end);
  const next = i >= 0 && j > i ? previous.slice(0, i) + body + previous.slice(j + end.length) : `${previous.trimEnd()}\n\n${body}\n`;
  writeFileSync(out, next.startsWith('\n') ? next.trimStart() : next);
}

/** What the run was measured on: the cores and the load average when it started (1/5/15 min). */
export function machineAtStart(): string {
  return `${cpus().length} cores, load average at start ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')}`;
}
