// docdb's options (issue 17): listed by -u after the broker's, refused in one line when bad (exit 1, no stack),
// read from their BROKER_* twins, and the password never in a log line.
import t from 'tap';
import { MongoClient } from 'mongodb';
import { runBrokerHere, runBroker, spawnBroker, call, NGSI } from './helpers/broker.js';
import { dropDatabases, freshDbName, mongoUrl } from './helpers/docdb.js';

t.test('-u lists the options of docdb', async (t) => {
  const r = await runBroker(['-db', 'docdb', '-u']);
  t.equal(r.code, 0);
  for (const o of ['--dbHost', '--dbName', '--dbURI', '--dbUser', '--dbPwd', '--dbPoolSize', '--dbTimeout', '--dbSync', '--subCacheIval'])
    t.match(r.stdout, o, `${o} listed`);
  t.notMatch(r.stdout, '--dbLockPrefer', "embdb's options are not docdb's");
});

t.test('bad values are refused in one line, exit 1', async (t) => {
  for (const [args, says] of [
    [['--dbName', 'bad.name'], /--dbName 'bad\.name': letters, digits/],
    [['--dbName', 'x'.repeat(13)], /at most 12 characters/],
    [['--dbURI', 'http://user:secret@host/'], /--dbURI: a mongodb:\/\/ or mongodb\+srv:\/\/ connection string/],
    [['--dbHost', 'a/b'], /--dbHost 'a\/b'/],
    [['--dbPoolSize', '0'], /--dbPoolSize/],
    [['--dbSync', 'never'], /--dbSync/],
    [['--troe', 'embdb'], /--troe embdb.*needs --database embdb/],
  ] as const) {
    // The first from the command itself (a process: its exit status, standard error), the others as main.ts gives
    // them, in this process (runBrokerHere): a process start spared each.
    const r = await (args[0] === '--dbName' && args[1] === 'bad.name' ? runBroker : runBrokerHere)([
      '-db',
      'docdb',
      '--port',
      '0',
      ...args,
    ]);
    t.equal(r.code, 1, `${args.join(' ')}: exit 1`);
    t.match(r.stderr, says, `${args.join(' ')}: says why`);
    t.equal(r.stderr.trim().split('\n').length, 1, `${args.join(' ')}: one line, no stack`);
    t.notMatch(r.stderr, 'secret', 'a password in a refused URI is not echoed');
  }
});

t.test('BROKER_* twins; the password is never logged', async (t) => {
  const dbName = freshDbName();
  t.teardown(() => dropDatabases(dbName));
  const url = new URL(mongoUrl());
  const b = await spawnBroker(['--database', 'docdb', '--dbUser', 'ldb'], {
    BROKER_DBHOST: url.host,
    BROKER_DBNAME: dbName,
    BROKER_DBPWD: 'pw-5ecret-value',
    BROKER_DBTIMEOUT: '500',
  });
  // FerretDB without authentication refuses the credentials or ignores them: either way the broker runs and logs.
  await call(b, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Car:o1', type: 'Car' } });
  await call(b, 'GET', `${NGSI}/entities/urn:ngsi-ld:Car:o1`);
  await b.stop();
  t.ok(b.logs.length > 0);
  t.notOk(
    b.logs.some((l) => l.includes('5ecret')),
    'no log line holds the password',
  );
});

t.test('BROKER_DBNAME names the database', async (t) => {
  const dbName = freshDbName();
  t.teardown(() => dropDatabases(dbName));
  const b = await spawnBroker(['--database', 'docdb', '--dbURI', mongoUrl()], { BROKER_DBNAME: dbName });
  t.equal((await call(b, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Car:o2', type: 'Car' } })).status, 201);
  await b.stop();
  const client = new MongoClient(mongoUrl());
  t.equal(
    await client
      .db(dbName)
      .collection('entities')
      .countDocuments({ _id: 'urn:ngsi-ld:Car:o2' } as never),
    1,
    'stored there',
  );
  await client.close();
});
