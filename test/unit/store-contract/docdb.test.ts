// The store contract suite (helpers/suite.ts) on docdb, on the tests' MongoDB-wire server (FerretDB,
// test/services/ferretdb.sh), each subtest on databases of its own, opened through the plugin module as the broker
// opens it. docdb keeps no history of its own (`--troe embdb` is refused with it): the history subtest says so.
import t from 'tap';
import { storeOpen } from '../../../src/plugins/store/docdb/index.js';
import { storeContractSuite, type OpenSubject } from './helpers/suite.js';
import { dropDatabases, freshDbName, mongoUrl } from '../../api/helpers/docdb.js';

const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

const open: OpenSubject = async (t) => {
  const dbName = freshDbName();
  const store = await storeOpen({ options: { dbURI: mongoUrl(), dbName }, primary: true, log });
  t.teardown(async () => {
    await store.close();
    await dropDatabases(dbName);
  });
  return { store, history: undefined };
};

t.test('docdb on the test server', async (t) => storeContractSuite(t, open));
