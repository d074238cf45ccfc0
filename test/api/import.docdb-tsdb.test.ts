// import.test.ts again on --database docdb (FerretDB, test/services/ferretdb.sh) with --troe tsdb (QuestDB): the
// importer into both, then a broker on the same database and tables answers as from the source.
process.env.TEST_STORE = 'docdb';
process.env.LDB_TEST_TROE = 'tsdb';
await import('./import.test.js');
