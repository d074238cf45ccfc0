// The notification counters of a csource subscription (CIM 009 v1.8.1 §5.2.12 timesSent, timesFailed) when many
// notifications end at once: registrations created concurrently are each notified (§5.11.7) from whichever thread
// took them, and each notification counts once, on the embedded store with pipeline threads and on docdb with two
// brokers sharing it. A count read, added to and written back lost the increments that raced it.
import t, { type Test } from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { startMockSource, type MockSource } from './helpers/mock-source.js';
import { docdbArgs, dropDatabases, freshDbName } from './helpers/docdb.js';

const S = `${NGSI}/csourceSubscriptions`;
const R = `${NGSI}/csourceRegistrations`;
const N = 40;
let receiver: MockSource;
t.before(async () => {
  receiver = await startMockSource(() => ({ status: 204 }));
});
t.teardown(() => receiver.stop());

let n = 0;

async function countsEveryNotification(t: Test, brokers: Broker[]): Promise<void> {
  const subId = `urn:ngsi-ld:Subscription:counted${++n}`;
  const type = `Depot${n}`;
  const c = await call(brokers[0]!, 'POST', S, {
    body: { id: subId, type: 'Subscription', entities: [{ type }], notification: { endpoint: { uri: `${receiver.url}/notify` } } },
  });
  t.equal(c.status, 201, c.text);
  // The other brokers of a set read csource subscriptions from the store at each registration: no wait needed.
  const created = await Promise.all(
    Array.from({ length: N }, (_, i) =>
      call(brokers[i % brokers.length]!, 'POST', R, {
        body: {
          id: `urn:ngsi-ld:ContextSourceRegistration:counted${n}-${i}`,
          type: 'ContextSourceRegistration',
          information: [{ entities: [{ type }] }],
          endpoint: 'http://127.0.0.1:9',
        },
      }),
    ),
  );
  t.same(
    created.map((r) => r.status),
    created.map(() => 201),
  );
  const sent = () => receiver.received.filter((r) => (JSON.parse(r.body) as { subscriptionId?: string }).subscriptionId === subId).length;
  for (let i = 0; i < 300 && sent() < N; i++) await new Promise((r) => setTimeout(r, 20));
  t.equal(sent(), N, 'one notification per registration');
  let counted = 0;
  for (let i = 0; i < 100; i++) {
    counted = (await call(brokers[0]!, 'GET', `${S}/${subId}`)).json.notification.timesSent as number;
    if (counted >= N) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  t.equal(counted, N, 'timesSent counts every notification sent');
}

t.test('embdb, pipeline threads', async (t) => {
  // Two pipeline threads: the registrations' notifications leave from both, and count once each.
  const broker = await startBroker(['--connectionPoolSize', '2'], {}, { pool: true });
  t.teardown(() => broker.stop());
  await countsEveryNotification(t, [broker]);
});

t.test('docdb, two brokers sharing it', async (t) => {
  const dbName = freshDbName();
  const brokers = [await startBroker(docdbArgs(dbName), {}, { pool: true }), await startBroker(docdbArgs(dbName), {}, { pool: true })];
  t.teardown(async () => {
    for (const b of brokers) await b.stop();
    await dropDatabases(dbName);
  });
  await countsEveryNotification(t, brokers);
});
