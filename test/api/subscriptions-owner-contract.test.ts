// The broker's side of subscription owners (seed 000 §2.6, §5.3), with the contract test plugin
// (test/fixtures/auth/contract-plugin.js): whatever a plugin decides per entity for the owner applies to its
// notifications, on changes and on timeInterval notifications alike: an entity the entity hook refuses is left out,
// a `partial` answer leaves out the attributes refused one by one, and the owner is the sender of the last POST or
// PATCH, restored on the notifier thread.
import t, { type Test } from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { repoPath } from '../helpers/repo.js';

const PLUGIN = repoPath('test/fixtures/auth/contract-plugin.js');
const V = 'https://uri.etsi.org/ngsi-ld/default-context/';
let broker: Broker;
let receiver: Receiver;

t.before(async () => {
  receiver = await startReceiver();
  broker = await startBroker(['--auth', PLUGIN]);
});
t.teardown(async () => {
  await broker.stop();
  receiver.close();
});

const writer = { 'x-user': 'writer' };
const owner = { 'x-user': 'owner', 'x-deny-entity': 'urn:ngsi-ld:Meter:2', 'x-partial': `${V}secret` };

async function write(t: Test, value: number): Promise<void> {
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/upsert`, {
    headers: writer,
    body: ['urn:ngsi-ld:Meter:1', 'urn:ngsi-ld:Meter:2'].map((id) => ({
      id,
      type: 'Meter',
      open: { type: 'Property', value },
      secret: { type: 'Property', value },
    })),
  });
  t.ok(r.status < 300, r.text);
}

t.test("notifications carry what the entity hook lets the owner read, attribute by attribute after 'partial'", async (t) => {
  const sub = (id: string, path: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    id,
    type: 'Subscription',
    entities: [{ type: 'Meter' }],
    notification: { endpoint: { uri: receiver.url + path } },
    ...extra,
  });
  t.equal((await call(broker, 'POST', `${NGSI}/subscriptions`, { headers: owner, body: sub('urn:s:changes', '/changes') })).status, 201);
  t.equal(
    (await call(broker, 'POST', `${NGSI}/subscriptions`, { headers: owner, body: sub('urn:s:periodic', '/periodic', { timeInterval: 1 }) }))
      .status,
    201,
  );
  t.equal((await call(broker, 'POST', `${NGSI}/subscriptions`, { headers: writer, body: sub('urn:s:writer', '/writer') })).status, 201);
  await write(t, 1);
  await receiver.at('/writer', 2);
  await write(t, 2);
  await receiver.at('/writer', 4);
  const changes = await receiver.at('/changes', 2);
  t.same(receiver.idsAt('/changes'), ['urn:ngsi-ld:Meter:1', 'urn:ngsi-ld:Meter:1'], 'Meter:2, refused by the entity hook, is left out');
  for (const n of changes) {
    t.ok(n.body.data[0].open, 'an allowed attribute stays');
    t.equal(n.body.data[0].secret, undefined, 'a refused attribute is left out');
    t.equal(n.body.data[0].type, 'Meter');
  }
  t.same(
    receiver.idsAt('/writer').sort(),
    ['urn:ngsi-ld:Meter:1', 'urn:ngsi-ld:Meter:1', 'urn:ngsi-ld:Meter:2', 'urn:ngsi-ld:Meter:2'],
    "the writer's own subscription reads both",
  );
  const [periodic] = await receiver.at('/periodic', 1);
  t.same(
    (periodic!.body.data as Array<Record<string, unknown>>).map((e) => [e.id, e.secret]),
    [['urn:ngsi-ld:Meter:1', undefined]],
    'a timeInterval notification is decided the same way',
  );

  // seed 000 §3: a PATCH is how the subscription changes hands: the writer may read everything
  t.equal(
    (await call(broker, 'PATCH', `${NGSI}/subscriptions/urn:s:changes`, { headers: writer, body: { description: 'mine' } })).status,
    204,
  );
  await write(t, 3);
  await receiver.at('/changes', 4);
  t.same(receiver.idsAt('/changes').slice(2).sort(), ['urn:ngsi-ld:Meter:1', 'urn:ngsi-ld:Meter:2'], 'the new owner reads both');
  t.ok(receiver.received.filter((r) => r.path === '/changes').at(-1)!.body.data[0].secret, 'and every attribute');
});
