// PurgeEntities (CIM 009 v1.9.1 §5.6.21, §6.4.3.3): DELETE /entities with a selection deletes what it matches, or
// with drop/keep removes attributes; deletions notify and enter the history as one-entity deletes do; a purge of
// thousands of entities runs in chunks and passes; bad parameters are 400 and purge nothing.
import t from 'tap';
import { createServer, type Server } from 'node:http';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
let receiver: Server;
let base = '';
const received: Array<{ path: string; body: any }> = [];
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const prop = (value: unknown) => ({ type: 'Property', value });

t.before(async () => {
  receiver = createServer((req, res) => {
    let text = '';
    req.on('data', (d) => {
      text += String(d);
    });
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: JSON.parse(text) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  broker = await startBroker(['--troe', 'embdb']);
});
t.teardown(async () => {
  await broker.stop();
  receiver.close();
});

/** Entities of a tenant of their own, so that the tests do not see each other's. */
async function create(tenant: string, entities: Array<Record<string, unknown>>): Promise<void> {
  for (let i = 0; i < entities.length; i += 1000) {
    const r = await call(broker, 'POST', `${NGSI}/entityOperations/create`, {
      body: entities.slice(i, i + 1000),
      headers: { 'NGSILD-Tenant': tenant },
    });
    if (r.status !== 201) throw new Error(r.text);
  }
}
const purge = (tenant: string, qs: string) => call(broker, 'DELETE', `${NGSI}/entities${qs}`, { headers: { 'NGSILD-Tenant': tenant } });
const idsOf = async (tenant: string, qs: string): Promise<string[]> =>
  (await call(broker, 'GET', `${NGSI}/entities?${qs}&limit=1000`, { headers: { 'NGSILD-Tenant': tenant } })).json
    .map((e: { id: string }) => e.id)
    .sort();
const count = async (tenant: string, qs: string): Promise<number> =>
  Number(
    (await call(broker, 'GET', `${NGSI}/entities?${qs}&limit=0&count=true`, { headers: { 'NGSILD-Tenant': tenant } })).headers.get(
      'ngsild-results-count',
    ),
  );

const b = (k: string, attrs: Record<string, unknown> = {}) => ({ id: `urn:ngsi-ld:Building:${k}`, type: 'Building', ...attrs });
const fixture = () => [
  b('1', { name: prop('Eiffel Tower'), category: prop('tower') }),
  b('2', { name: prop('Louvre'), category: prop('museum') }),
  { id: 'urn:ngsi-ld:Vehicle:1', type: 'Vehicle', name: prop('Eiffel Tower') },
];

t.test('type=Building deletes every Building and nothing else', async (t) => {
  await create('pga', fixture());
  const r = await purge('pga', '?type=Building');
  t.equal(r.status, 204, r.text);
  t.equal(r.text, '');
  t.same(await idsOf('pga', 'type=Building'), []);
  t.same(await idsOf('pga', 'type=Vehicle'), ['urn:ngsi-ld:Vehicle:1']);
});

t.test('q, id with type, idPattern and scopeQ select what is purged', async (t) => {
  await create('pgb', [...fixture(), b('3', { scope: '/a/b' }), b('4', { scope: '/c' })]);
  t.equal((await purge('pgb', '?type=Building&q=name%3D%3D%22Eiffel%20Tower%22')).status, 204);
  t.same(await idsOf('pgb', 'type=Building'), ['urn:ngsi-ld:Building:2', 'urn:ngsi-ld:Building:3', 'urn:ngsi-ld:Building:4']);
  t.same(await idsOf('pgb', 'type=Vehicle'), ['urn:ngsi-ld:Vehicle:1'], 'q with type: the Vehicle of the same name stays');
  t.equal((await purge('pgb', '?id=urn:ngsi-ld:Building:2&type=Building')).status, 204);
  t.equal((await purge('pgb', '?scopeQ=/a/%23')).status, 204);
  t.same(await idsOf('pgb', 'type=Building'), ['urn:ngsi-ld:Building:4']);
  t.equal((await purge('pgb', '?idPattern=.*:Vehicle:.*')).status, 204);
  t.same(await idsOf('pgb', 'type=Vehicle'), []);
  t.equal((await purge('pgb', '?type=Nothing')).status, 204, 'matching nothing is no error');
});

t.test('local=true alone purges every entity of the tenant, and only of that tenant', async (t) => {
  await create('pgc', fixture());
  await create('pgd', fixture());
  t.equal((await purge('pgc', '?local=true')).status, 204);
  t.equal(await count('pgc', 'local=true'), 0);
  t.equal(await count('pgd', 'local=true'), 3);
});

t.test('drop removes the attributes named, keep all but those named; the entities stay', async (t) => {
  await create('pge', fixture());
  t.equal((await purge('pge', '?type=Building&drop=name')).status, 204);
  const one = (await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:1`, { headers: { 'NGSILD-Tenant': 'pge' } })).json;
  t.same(Object.keys(one).sort(), ['category', 'id', 'type']);
  t.ok(
    (await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Vehicle:1`, { headers: { 'NGSILD-Tenant': 'pge' } })).json.name,
    'the Vehicle keeps its name',
  );
  await create('pgf', fixture());
  t.equal((await purge('pgf', '?id=urn:ngsi-ld:Building:2&keep=name')).status, 204);
  const two = (await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Building:2`, { headers: { 'NGSILD-Tenant': 'pgf' } })).json;
  t.same(Object.keys(two).sort(), ['id', 'name', 'type']);
  t.equal((await purge('pgf', '?type=Building&drop=name')).status, 204);
  t.equal((await purge('pgf', '?type=Building&drop=name')).status, 204, 'dropping what is gone changes nothing and is no error');
  t.equal(await count('pgf', 'type=Building'), 2);
});

t.test(
  'bad parameters are 400 (BadRequestData; InvalidRequest for a parameter the operation does not take) and purge nothing',
  async (t) => {
    await create('pgg', fixture());
    const cases: Array<[string, RegExp]> = [
      ['', /needs at least one of/],
      ['?local=false', /needs at least one of/],
      ['?type=Building&keep=name&drop=category', /keep and drop cannot be given together/],
      ['?type=Building&foo=1', /unknown URL parameter 'foo'/],
      ['?type=Building&attrs=name', /unknown URL parameter 'attrs'/],
      ['?type=Building&drop=name;category', /drop: expected ',' or the end/],
      ['?type=Building&keep=locatedAt{name}', /keep: names attributes/],
      ['?type=Building&drop=id', /drop: 'id' is not an attribute/],
      ['?type=Building&keep=', /keep: expected an entity member name/],
      ['?type=Building&q=name%3D%3D', /q/],
      ['?id=not-a-uri', /id/],
      ['?type=Building&local=maybe', /local/],
    ];
    for (const [qs, detail] of cases) {
      const r = await purge('pgg', qs);
      t.equal(r.status, 400, `${qs}: ${r.text}`);
      t.match(r.json?.detail, detail, qs);
      if (qs.includes('q=')) t.ok([`${ERR}BadRequestData`, `${ERR}InvalidRequest`].includes(r.json?.type), qs);
      // CIM 009 v1.8.1 §6.3.20: a parameter the operation does not take is InvalidRequest.
      else t.equal(r.json?.type, /unknown URL parameter/.test(r.json?.detail ?? '') ? `${ERR}InvalidRequest` : `${ERR}BadRequestData`, qs);
    }
    t.equal(await count('pgg', 'local=true'), 3, 'nothing was purged');
  },
);

t.test('purged entities notify subscribers and enter the history as deletes of each entity', async (t) => {
  const tenant = { 'NGSILD-Tenant': 'pgh' };
  await create('pgh', fixture());
  const sub = {
    id: 'urn:ngsi-ld:Subscription:purge',
    type: 'Subscription',
    entities: [{ type: 'Building' }],
    notificationTrigger: ['entityDeleted', 'attributeDeleted'],
    notification: { endpoint: { uri: `${base}/purge` } },
  };
  t.equal((await call(broker, 'POST', `${NGSI}/subscriptions`, { body: sub, headers: tenant })).status, 201);
  t.equal((await purge('pgh', '?type=Building&drop=category')).status, 204);
  t.equal((await purge('pgh', '?type=Building')).status, 204);
  const deadline = Date.now() + 8000;
  while (received.filter((r) => r.path === '/purge').length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const got = received.filter((r) => r.path === '/purge');
  t.same(got.map((n) => n.body.triggerReason).sort(), ['attributeDeleted', 'attributeDeleted', 'entityDeleted', 'entityDeleted']);
  t.same(
    got
      .filter((n) => n.body.triggerReason === 'entityDeleted')
      .map((n) => n.body.data[0].id)
      .sort(),
    ['urn:ngsi-ld:Building:1', 'urn:ngsi-ld:Building:2'],
  );
  const history = await call(broker, 'GET', `${NGSI}/temporal/entities/urn:ngsi-ld:Building:1`, { headers: tenant });
  t.equal(history.status, 200, history.text);
  t.ok(history.json.deletedAt, 'the temporal entity records the deletion');
  t.ok(
    history.json.category.some((i: { deletedAt?: string }) => i.deletedAt !== undefined),
    'the dropped attribute has its tombstone',
  );
});

t.test('a purge of thousands of entities runs in chunks and passes; what stays matching is passed over, not redone', async (t) => {
  const n = 5600;
  const many = Array.from({ length: n }, (_, i) => b(`m${i}`, { name: prop(`n${i}`), category: prop(i % 2 === 0 ? 'even' : 'odd') }));
  await create('pgi', many);
  // drop leaves every entity matching the selection: each pass must go on past the ones it changed.
  t.equal((await purge('pgi', '?type=Building&drop=name')).status, 204);
  t.equal(await count('pgi', 'type=Building&q=name'), 0, 'every entity lost its name, across chunks and passes');
  t.equal(await count('pgi', 'type=Building'), n);
  t.equal((await purge('pgi', '?type=Building&q=category%3D%3D%22even%22')).status, 204);
  t.equal(await count('pgi', 'type=Building'), n / 2, 'a filtered purge across passes deletes exactly its matches');
  t.equal(await count('pgi', 'type=Building&q=category%3D%3D%22even%22'), 0);
  t.equal((await purge('pgi', '?type=Building')).status, 204);
  t.equal(await count('pgi', 'type=Building'), 0);
});
