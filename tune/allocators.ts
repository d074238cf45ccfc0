// The allocators the measured table compares (seed 001 §4.4): the system's (glibc malloc) and two alternatives that
// LD_PRELOAD puts in its place, Debian's libjemalloc2 and libmimalloc2.0. A missing one is left out with a line.
import { existsSync, readdirSync } from 'node:fs';
import type { Allocator } from './run-once.js';

/** Debian's multiarch directories (x86_64-linux-gnu, aarch64-linux-gnu, ...), then /usr/lib. */
export function libraryDirs(root = '/usr/lib'): string[] {
  const dirs: string[] = [];
  if (existsSync(root)) for (const d of readdirSync(root)) if (d.endsWith('-linux-gnu')) dirs.push(`${root}/${d}`);
  return [...dirs.sort(), root];
}

/** The first file of `dirs` whose name matches: the versioned name a Debian runtime package installs. */
export function findLibrary(dirs: readonly string[], name: RegExp): string | undefined {
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    const hit = readdirSync(dir)
      .filter((f) => name.test(f))
      .sort()[0];
    if (hit !== undefined) return `${dir}/${hit}`;
  }
  return undefined;
}

export const ALTERNATIVES: { name: string; file: RegExp; pkg: string }[] = [
  { name: 'jemalloc', file: /^libjemalloc\.so\.2$/, pkg: 'libjemalloc2' },
  { name: 'mimalloc', file: /^libmimalloc\.so\.\d+$/, pkg: 'libmimalloc2.0' },
];

/** The system allocator and each alternative found; `missing` names the others with the package that has them. */
export function findAllocators(dirs = libraryDirs()): { found: Allocator[]; missing: string[] } {
  const found: Allocator[] = [{ name: 'system' }];
  const missing: string[] = [];
  for (const a of ALTERNATIVES) {
    const library = findLibrary(dirs, a.file);
    if (library === undefined) missing.push(`${a.name} (Debian package ${a.pkg})`);
    else found.push({ name: a.name, library });
  }
  return { found, missing };
}
