// Loads the JSON fixtures of test/fixtures/entity/ for the entity unit tests.
import { readFileSync } from 'node:fs';
import { LdError } from '../../../src/ngsild/problem.js';
import { repoPath } from '../../helpers/repo.js';

const dir = repoPath('test/fixtures/entity/');

export function fixture<T>(name: string): T {
  return JSON.parse(readFileSync(dir + name, 'utf8')) as T;
}

/** The LdError `fn` throws; fails the calling test (by throwing) when it returns or throws something else. */
export function ldErrorOf(fn: () => unknown): LdError {
  try {
    fn();
  } catch (err) {
    if (err instanceof LdError) return err;
    throw err;
  }
  throw new Error('expected an LdError, but nothing was thrown');
}
