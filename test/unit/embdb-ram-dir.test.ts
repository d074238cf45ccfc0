// A RAM store left by a broker that was killed is removed by the next broker's start; a live broker's, one whose
// pid was reused by another process, a directory without an owner file, a symbolic link and other names are judged
// as the sweep promises.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeRamDir, sweepStaleRamDirs } from '../../src/plugins/store/embdb/ram-dir.js';
import { storeDispose, storePrepare } from '../../src/plugins/store/embdb/index.js';

const logged: object[] = [];
const log = {
  debug: () => {},
  info: (o: object | string) => void logged.push(typeof o === 'string' ? { msg: o } : o),
  warn: () => {},
  error: () => {},
};

/** A pid that ran and has exited (its process waited for, so it is not a zombie holding the pid). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(r.stdout.toString());
}

function root(t: { teardown: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'ram-root-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function fakeStore(rootDir: string, name: string, owner: string | undefined): string {
  const dir = join(rootDir, name);
  mkdirSync(join(dir, 'embdb'), { recursive: true });
  writeFileSync(join(dir, 'embdb', 'data.mdb'), 'x'.repeat(1024));
  if (owner !== undefined) writeFileSync(join(dir, 'owner'), owner);
  return dir;
}

t.test('makeRamDir names this process and the time it started', async (t) => {
  const r = root(t);
  const dir = makeRamDir(r);
  const [pid, started] = readFileSync(join(dir, 'owner'), 'utf8').trim().split(' ');
  t.equal(Number(pid), process.pid);
  t.match(started, /^\d+$/, 'the start time from /proc');
  t.same(sweepStaleRamDirs(r, log), [], "this process's own directory stays");
  t.ok(existsSync(dir));
});

t.test('the directories of dead owners go, every other stays', async (t) => {
  const r = root(t);
  logged.length = 0;
  const dead = fakeStore(r, 'ldbroker-dead01', `${deadPid()} 1\n`);
  const deadNoStart = fakeStore(r, 'ldbroker-dead02', `${deadPid()} \n`);
  // pid 1 runs (this machine's init), but it started at another time than this file says: a reused pid.
  const reused = fakeStore(r, 'ldbroker-reuse1', '1 999999999999\n');
  const alive = fakeStore(r, 'ldbroker-alive1', `${process.ppid} \n`);
  const noOwner = fakeStore(r, 'ldbroker-noown1', undefined);
  const garbled = fakeStore(r, 'ldbroker-garbl1', 'not a pid\n');
  const otherName = fakeStore(r, 'other-dead0001', `${deadPid()} 1\n`);
  const target = fakeStore(r, 'target-of-link', `${deadPid()} 1\n`);
  symlinkSync(target, join(r, 'ldbroker-link01'));

  const removed = sweepStaleRamDirs(r, log).sort();
  t.same(removed, ['ldbroker-dead01', 'ldbroker-dead02', 'ldbroker-reuse1']);
  t.notOk(existsSync(dead));
  t.notOk(existsSync(deadNoStart));
  t.notOk(existsSync(reused));
  for (const kept of [alive, noOwner, garbled, otherName, target, join(r, 'ldbroker-link01')]) {
    t.ok(existsSync(kept), `${kept} stays`);
  }
  t.equal(logged.length, 1, 'one log line for the sweep');
  t.same((logged[0] as { removed: string[] }).removed.sort(), removed);
});

t.test('a root that does not exist is no error', async (t) => {
  t.same(sweepStaleRamDirs(join(tmpdir(), 'no-such-ram-root-' + process.pid), log), []);
});

t.test('storePrepare makes an owned directory and storeDispose removes it', async (t) => {
  const params = { options: {}, primary: true, log };
  const prepared = await storePrepare(params);
  const dir = join(prepared.dbPath as string, '..');
  t.equal(prepared.ram, true);
  t.ok(existsSync(join(dir, 'owner')), 'owner file written');
  await storeDispose({ ...params, options: prepared });
  t.notOk(existsSync(dir), 'removed at dispose');
});
