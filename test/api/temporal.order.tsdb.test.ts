// temporal.order.test.ts again on --troe tsdb (QuestDB, test/services/questdb.sh): the same answers from either history.
process.env.LDB_TEST_TROE = 'tsdb';
await import('./temporal.order.test.js');
