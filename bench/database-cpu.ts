// CPU time of the database processes behind a broker variant (docdb: FerretDB, and the PostgreSQL of its PostgreSQL
// backend), from /proc (Linux), so a row can say how a request's CPU splits between the broker and its database. The
// processes are found by the loopback port they listen on (the servers test/services/ferretdb.sh starts), with the
// children of the listener for PostgreSQL (one backend process per connection, forked by the postmaster).
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { CPU_TICK_US } from './thread-cpu.js';

/** A database server whose CPU a variant's rows add: `port` on 127.0.0.1; `children`: its child processes too. */
export interface DatabaseProcess {
  name: string;
  port: number;
  children?: boolean;
}

/** One reading: database name → pid → user + system CPU in µs. */
export type DatabaseSnapshot = Map<string, Map<number, number>>;

/** The port of a loopback URL (mongodb://127.0.0.1:57017/, postgres://u@127.0.0.1:5432/db); undefined elsewhere. */
export function loopbackPort(url: string | undefined): number | undefined {
  if (url === undefined) return undefined;
  try {
    const u = new URL(url);
    return ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname) && u.port !== '' ? Number(u.port) : undefined;
  } catch {
    return undefined;
  }
}

/** The inodes of the sockets listening on `port` (/proc/net/tcp and tcp6: local address in hex, state 0A = LISTEN). */
function listeningInodes(port: number): Set<string> {
  const out = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[3] === '0A' && f[1]!.endsWith(':' + hexPort)) out.add(f[9]!);
    }
  }
  return out;
}

const pids = (): number[] =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);

/** The process listening on 127.0.0.1:`port`, found by its socket among every process's descriptors. */
export function listeningPid(port: number): number | undefined {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return undefined;
  for (const pid of pids()) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m !== null && inodes.has(m[1]!)) return pid;
      } catch {
        // closed between the listing and the read
      }
    }
  }
  return undefined;
}

/** `pid`'s parent and user + system CPU (µs), from /proc/<pid>/stat; undefined when it is gone. */
function stat(pid: number): { ppid: number; us: number } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // `pid (name) state ppid ...`: fields counted after the last ')' (the name may hold spaces); utime, stime are 14, 15.
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), us: (Number(f[11]) + Number(f[12])) * CPU_TICK_US };
  } catch {
    return undefined;
  }
}

/** The listening process of each database (found once, by the caller) and, where asked, its children now. */
export function databaseSnapshot(dbs: ReadonlyArray<DatabaseProcess & { pid: number }>): DatabaseSnapshot {
  const out: DatabaseSnapshot = new Map();
  const all = dbs.some((d) => d.children === true) ? pids().map((pid) => [pid, stat(pid)] as const) : [];
  for (const db of dbs) {
    const mine = new Map<number, number>();
    const own = stat(db.pid);
    if (own !== undefined) mine.set(db.pid, own.us);
    if (db.children === true) for (const [pid, s] of all) if (s !== undefined && s.ppid === db.pid) mine.set(pid, s.us);
    out.set(db.name, mine);
  }
  return out;
}

/** CPU µs of each database between two readings; a process started between them counts from zero. */
export function databaseSpent(before: DatabaseSnapshot, after: DatabaseSnapshot): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, procs] of after) {
    const was = before.get(name);
    let us = 0;
    for (const [pid, t] of procs) us += Math.max(0, t - (was?.get(pid) ?? 0));
    out[name] = us;
  }
  return out;
}
