// `--duration <s>` of the benchmarks that take no other option (auth, auth-ngsild, websocket, distributed): `make
// bench` shortens their rows to keep the whole run within its 20 minutes (bench/all.sh).
export function durationArg(fallback: number): number {
  const i = process.argv.indexOf('--duration');
  if (i < 0) return fallback;
  const n = Number(process.argv[i + 1]);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--duration: '${process.argv[i + 1]}' is not a positive number of seconds`);
  return n;
}
