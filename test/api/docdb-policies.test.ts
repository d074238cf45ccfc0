// The policy API on two brokers of one docdb (issue 17: policies seen by every broker): a policy created through one
// broker's PAP is found by its uid through the other's, its uid stays unique across both, and a delete on one is
// seen by the other.
import t from 'tap';
import { startBroker, call, type Broker } from './helpers/broker.js';
import { docdbArgs, dropDatabases, freshDbName } from './helpers/docdb.js';

function policyPortOf(b: Broker): number {
  for (const line of b.logs) {
    const rec = JSON.parse(line) as { msg?: string; port?: number };
    if (rec.msg === 'policy API listening' && rec.port !== undefined) return rec.port;
  }
  throw new Error('the broker did not log its policy port');
}

const policy = (uid: string): Record<string, unknown> => ({
  '@context': { odrl: 'http://www.w3.org/ns/odrl/2/' },
  '@type': 'odrl:Policy',
  'odrl:uid': uid,
  'odrl:permission': { 'odrl:action': 'odrl:read', 'odrl:assignee': 'vc:any', 'odrl:target': 'urn:asset:1' },
});

t.test('a policy made on one broker is found, kept unique and deleted through the other', async (t) => {
  const dbName = freshDbName();
  const brokers = [
    await startBroker([...docdbArgs(dbName), '--policyApiPort', '0', '--logLevel', 'info']),
    await startBroker([...docdbArgs(dbName), '--policyApiPort', '0', '--logLevel', 'info']),
  ];
  t.teardown(async () => {
    for (const b of brokers) await b.stop();
    await dropDatabases(dbName);
  });
  const [a, b] = brokers.map((br) => `http://127.0.0.1:${policyPortOf(br)}`) as [string, string];
  const made = await call(a, 'POST', '/policy', { body: policy('urn:p:shared') });
  t.equal(made.status, 200);
  const id = made.headers.get('location');
  const found = await call(b, 'GET', `/policy/odrl/${encodeURIComponent('urn:p:shared')}`);
  t.equal(found.status, 200, 'found by uid on the other broker');
  t.equal(found.json?.id, id);
  t.equal((await call(b, 'POST', '/policy', { body: policy('urn:p:shared') })).status, 409, 'its uid is taken on the other broker too');
  t.equal((await call(b, 'DELETE', `/policy/odrl/${encodeURIComponent('urn:p:shared')}`)).status, 204);
  t.equal((await call(a, 'GET', `/policy/odrl/${encodeURIComponent('urn:p:shared')}`)).status, 404, 'deleted on the other: gone here');
  t.equal((await call(a, 'POST', '/policy', { body: policy('urn:p:shared') })).status, 200, 'and its uid free again');
});
