// The RAM store's directory on tmpfs (/dev/shm), and the sweep of those a dead broker left behind.
//
// A broker removes its RAM store at exit (storeDispose), but one killed (SIGKILL, the OOM killer, a crash, a
// container stopped without its grace period) leaves the directory, and tmpfs is memory: a supervisor restarting a
// crashing broker leaked a whole store per restart, 14 GiB on this machine before this sweep. Each directory names
// its owner (pid and the kernel's start time of that process, so a reused pid is not taken for the owner); at start
// the primary removes the directories whose owner no longer runs. A directory without an owner file (written by an
// older build, or being created right now) is left alone: nothing here can tell it is unused.
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PluginLogger } from '../../../plugin/contract.js';

const PREFIX = 'ldbroker-';
const OWNER_FILE = 'owner';

/** tmpfs where there is one (pages of an LMDB map there are never written to a disk), else the OS temp directory. */
export function ramRoot(): string {
  return existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
}

/** The kernel's start time of a process (clock ticks since boot, /proc/<pid>/stat field 22), or undefined. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Whether the process an owner file names still runs (and is the same process, not a reused pid). */
function ownerAlive(pid: number, started: string | undefined): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    // EPERM: it runs, under another user.
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (started === undefined || !existsSync('/proc/self/stat')) return true;
  const now = startTime(pid);
  return now === undefined || now === started;
}

/** A new directory for this process's RAM store under root, with its owner file written before it is used. */
export function makeRamDir(root: string): string {
  const dir = mkdtempSync(join(root, PREFIX));
  writeFileSync(join(dir, OWNER_FILE), `${process.pid} ${startTime(process.pid) ?? ''}\n`);
  return dir;
}

/**
 * Removes the RAM store directories under root whose owner is dead; returns their names. Only real directories
 * (never through a symbolic link) of this user, named as ours, with a well-formed owner file, are considered.
 */
export function sweepStaleRamDirs(root: string, log: PluginLogger): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(root).filter((n) => n.startsWith(PREFIX));
  } catch {
    return removed;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const dir = join(root, name);
    try {
      const st = lstatSync(dir);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      const owner = /^(\d+) (\d*)\n?$/.exec(readFileSync(join(dir, OWNER_FILE), 'utf8'));
      if (owner === null) continue;
      const pid = Number(owner[1]);
      if (pid === process.pid || ownerAlive(pid, owner[2] || undefined)) continue;
      rmSync(dir, { recursive: true, force: true });
      removed.push(name);
    } catch {
      // No owner file (an older build's, or one being made), or it went away meanwhile: not ours to judge.
    }
  }
  if (removed.length > 0) log.info({ removed, root }, 'removed the RAM stores of brokers that no longer run');
  return removed;
}
