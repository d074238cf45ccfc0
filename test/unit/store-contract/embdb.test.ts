// The store contract suite (helpers/suite.ts) on embdb, opened through its plugin module as the broker opens it: in
// RAM and on disk, with either lock preference, its history kept in its transactions when asked.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeDispose, storeOpen, storePrepare } from '../../../src/plugins/store/embdb/index.js';
import { storeContractSuite, type OpenSubject } from './helpers/suite.js';

const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

function opener(ram: boolean, lockPrefer: 'reads' | 'writes'): OpenSubject {
  return async (t, { history }) => {
    const dir = ram ? undefined : mkdtempSync(join(tmpdir(), 'store-contract-'));
    const params = {
      options: { dbDir: dir, dbLockPrefer: lockPrefer } as Record<string, unknown>,
      primary: true,
      log,
      keepHistory: history,
    };
    params.options = { ...params.options, ...(await storePrepare(params)) };
    const store = await storeOpen(params);
    t.teardown(async () => {
      await store.close();
      await storeDispose(params);
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });
    return { store, history: store.history };
  };
}

for (const ram of [true, false]) {
  for (const lockPrefer of ['reads', 'writes'] as const) {
    t.test(`embdb ${ram ? 'in RAM' : 'on disk'}, dbLockPrefer ${lockPrefer}`, async (t) => storeContractSuite(t, opener(ram, lockPrefer)));
  }
}
