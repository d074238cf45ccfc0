// import.test.ts again with the history on --troe tsdb (QuestDB, test/services/questdb.sh): the importer's batches
// into QuestDB, then a broker on the same embdb store and tables serves the same temporal evolutions.
process.env.LDB_TEST_TROE = 'tsdb';
await import('./import.test.js');
