// temporal.api.test.ts again on --database docdb (FerretDB, test/services/ferretdb.sh) with --troe tsdb (QuestDB):
// entity writes committed by docdb, their history appended by tsdb's writer, the same temporal answers.
process.env.TEST_STORE = 'docdb';
process.env.LDB_TEST_TROE = 'tsdb';
await import('./temporal.api.test.js');
