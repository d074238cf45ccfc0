// What bounds /metrics' series and what they show (README "Metrics"): endpoint hosts capped at HOST_LABELS then
// `<other>`, the host only; tenants capped the same way; the store counted at most once per interval; delivery's
// per-host counts; the latency histogram's quantiles.
import t from 'tap';
import { createServer, type Server } from 'node:http';
import { pino } from 'pino';
import { HostCounts, OTHER_HOST } from '../../src/notify/host-counts.js';
import { Delivery, type DeliveryOutcome } from '../../src/notify/delivery.js';
import type { DueNotification } from '../../src/notify/channel.js';
import { StoreSizesCache, OTHER_TENANT_LABEL, DEFAULT_TENANT_LABEL } from '../../src/front/store-sizes.js';
import { OpHistogram } from '../../src/pipeline/op-latency.js';
import type { Store, StoreSizes } from '../../src/store/contract.js';

const log = pino({ level: 'silent' });

t.test('hosts: the URL host only, at most the cap, then <other>', async (t) => {
  const hosts = new HostCounts(3);
  hosts.of(new URL('http://a.example:8080/secret/path?token=x')).sent++;
  hosts.of(new URL('http://user:pw@a.example:8080/other')).sent++;
  hosts.of(new URL('https://b.example/')).failed++;
  hosts.of(new URL('mqtt://c.example:1883/topic')).queued++;
  for (let i = 0; i < 10_000; i++) hosts.of(new URL(`http://random-${i}.example/`)).sent++;
  hosts.of(new URL('urn:ngsi-ld:WebSocket:123')).sent++;
  hosts.of(new URL(`mqtt://${'x'.repeat(300)}/t`)).sent++;
  t.same(hosts.rows(), [
    ['a.example:8080', 2, 0, 0],
    ['b.example', 0, 1, 0],
    ['c.example:1883', 0, 0, 1],
    [OTHER_HOST, 10_002, 0, 0],
  ]);
  t.throws(() => new URL(`http://${OTHER_HOST}/`), 'the overflow label is no host a URL can have');
  t.equal(new HostCounts(5).of(new URL('urn:ngsi-ld:WebSocket:123')).host, 'urn', 'a WebSocket connection: its scheme');
});

const due = (uri: string, n: number): DueNotification => ({
  tenant: '',
  subscriptionId: 'urn:s',
  uri,
  headers: ['Content-Type', 'application/json'],
  body: `{"n":${n}}`,
  orderKey: 'k',
  seq: n,
  timeoutMs: undefined,
  throttlingMs: 0,
});

t.test('delivery counts sent, failed (answered with an error, or dropped) and queued per host', async (t) => {
  let answer = 204;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(answer).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const host = `127.0.0.1:${(server.address() as { port: number }).port}`;
  const outcomes: DeliveryOutcome[] = [];
  const d = new Delivery((o) => outcomes.push(o), log, { queueMax: 2 });
  t.teardown(() => d.close());
  d.enqueue(due(`http://${host}/a?x=1`, 1));
  d.enqueue(due(`http://${host}/a?x=1`, 2));
  // Past the endpoint's queue: dropped, a failure not sent.
  d.enqueue(due(`http://${host}/a?x=1`, 3));
  t.same(d.hostCounts.rows(), [[host, 0, 1, 2]]);
  while (outcomes.length < 3) await new Promise((r) => setTimeout(r, 10));
  answer = 500;
  d.enqueue(due(`http://${host}/b`, 4));
  while (outcomes.length < 4) await new Promise((r) => setTimeout(r, 10));
  d.enqueue(due('not a uri', 5));
  t.same(d.hostCounts.rows(), [
    [host, 3, 2, 0],
    [OTHER_HOST, 0, 1, 0],
  ]);
});

/** A store whose sizes() answers what a test sets, counting the calls. */
function sizedStore(sizes: StoreSizes): { store: Store; calls: () => number } {
  let calls = 0;
  const store = {
    sizes: async () => {
      calls++;
      return sizes;
    },
  } as unknown as Store;
  return { store, calls: () => calls };
}

t.test('tenants: the largest up to the cap, the rest summed as <other>', async (t) => {
  const entities: Array<[string, number]> = [['', 5]];
  for (let i = 0; i < 50; i++) entities.push([`t${i}`, i]);
  // A name no tenant can have (ngsild/tenant.ts) is never a label, whatever the store says.
  entities.push(['Bad"Name\n', 1000]);
  const { store } = sizedStore({ bytes: 4096, entities });
  const read = await new StoreSizesCache(store, log, 60_000, 3).read();
  t.same(read, {
    bytes: 4096,
    entities: [
      ['t49', 49],
      ['t48', 48],
      ['t47', 47],
      [OTHER_TENANT_LABEL, 1000 + 5 + (46 * 47) / 2],
    ],
  });
  const space = `Snapshot_${'ab12'.repeat(8)}`;
  const few = await new StoreSizesCache(
    sizedStore({
      entities: [
        ['', 7],
        [space, 3],
      ],
    }).store,
    log,
  ).read();
  t.same(
    few,
    {
      entities: [
        [DEFAULT_TENANT_LABEL, 7],
        [space, 3],
      ],
    },
    "no <other> when nothing overflows; a Snapshot's space by name",
  );
});

t.test('the store is asked at most once per interval, whatever the scrapes', async (t) => {
  const { store, calls } = sizedStore({ entities: [['', 1]] });
  const cache = new StoreSizesCache(store, log, 60_000);
  for (let i = 0; i < 20; i++) await cache.read();
  t.equal(calls(), 1);
  const often = new StoreSizesCache(store, log, 0);
  await often.read();
  await often.read();
  t.equal(calls(), 3, 'asked again once the interval passed');
  t.equal(await new StoreSizesCache({} as Store, log).read(), undefined, 'a store without sizes(): no series');
});

t.test('histogram quantiles interpolate inside the bucket; above every bound reads as the last', async (t) => {
  const h = new OpHistogram();
  t.equal(h.quantile(4, 0.5), undefined);
  for (let i = 0; i < 100; i++) h.observe(4, 0.7); // bucket (0.5, 1]
  t.equal(h.quantile(4, 0.5), 0.75);
  t.equal(h.quantile(4, 0.99), 0.995);
  h.observe(4, 60_000);
  t.equal(h.cumulative(4, 16), 101);
  t.equal(h.quantile(4, 1), 10_000);
  t.equal(h.totals[4], 101);
  t.equal(h.totals[1], 0, 'other operations untouched');
});
