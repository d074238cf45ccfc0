// Periodic notifications (CIM 009 v1.8 §5.2.12 timeInterval) on the notifier thread: each subscription's timer
// notifies once per period, never faster than the 1 s bound (a subscription stored by an older build included), and
// a period longer than a Node.js timer can hold (24.8 days) waits in legs instead of firing every millisecond.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { PeriodicNotifications } from '../../src/notify/periodic.js';
import { compileSubscription, type CompiledSubscription } from '../../src/ngsild/subscription/compile.js';
import type { SubscriptionBody } from '../../src/ngsild/subscription/model.js';
import type { Store } from '../../src/store/contract.js';
import type { DueNotification } from '../../src/notify/channel.js';
import type { Logger } from '../../src/logger.js';
import { mapContext, DEFAULT_VOCAB } from './helpers/map-context.js';

const ctx = mapContext();
const entity = {
  id: 'urn:ngsi-ld:Car:1',
  type: [DEFAULT_VOCAB + 'Car'],
  createdAt: '2025-01-01T00:00:00Z',
  modifiedAt: '2025-01-01T00:00:00Z',
};

function periodic(timeInterval: number): CompiledSubscription {
  // As stored: validation is what a client's subscription passes; these are built past it, as an old store holds them.
  const body: SubscriptionBody = {
    id: `urn:ngsi-ld:Subscription:${timeInterval}`,
    type: 'Subscription',
    entities: [{ type: 'Car' }],
    timeInterval,
    notification: { endpoint: { uri: 'http://r/n' } },
  };
  return compileSubscription('', { body, context: null, createdAt: '', modifiedAt: '' }, ctx, ctx);
}

function harness(): { notifier: PeriodicNotifications; reads: () => number; sent: DueNotification[] } {
  let reads = 0;
  const store = {
    queryEntities: async () => {
      reads++;
      return { entities: [entity] };
    },
  } as unknown as Store;
  const sent: DueNotification[] = [];
  const log = { error: () => undefined } as unknown as Logger;
  return { notifier: new PeriodicNotifications(store, (d) => sent.push(d), log), reads: () => reads, sent };
}

t.test('a timeInterval of 30 days sets no 1 ms timer: nothing is read or sent at once', async (t) => {
  const { notifier, reads, sent } = harness();
  t.teardown(() => notifier.close());
  notifier.update('', 'month', periodic(2_592_000));
  await sleep(150);
  t.equal(reads(), 0, 'the store was not read (a timer of 2,592,000,000 ms fires after 1 ms in Node.js)');
  t.equal(sent.length, 0);
});

t.test('a stored timeInterval under the bound notifies no more often than each second', async (t) => {
  const { notifier, reads, sent } = harness();
  t.teardown(() => notifier.close());
  notifier.update('', 'fast', periodic(0.001));
  await sleep(150);
  t.equal(reads(), 0, 'not every millisecond');
  t.equal(sent.length, 0);
});

t.test('a timeInterval of 1 s notifies the selected entities, and a deleted subscription stops', async (t) => {
  const { notifier, sent } = harness();
  t.teardown(() => notifier.close());
  notifier.update('', 'each-second', periodic(1));
  for (let waited = 0; sent.length === 0 && waited < 10_000; waited += 50) await sleep(50);
  t.equal(sent.length, 1, 'notified once the period passed');
  t.match(sent[0]?.body, /urn:ngsi-ld:Car:1/);
  notifier.update('', 'each-second', undefined);
  const after = sent.length;
  await sleep(1_200);
  t.equal(sent.length, after, 'nothing after the delete');
});
