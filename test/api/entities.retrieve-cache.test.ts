// Retrieve Entity answered from the thread's rendered answers (ops/retrieve-cache.ts): every write, of any kind and
// from any thread, shows in the next GET; each tenant, representation and media type gets its own answer.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

const prop = (value: unknown) => ({ type: 'Property', value });
const url = (id: string, qs = '') => `${NGSI}/entities/${encodeURIComponent(id)}${qs}`;

async function ok(b: Broker, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<void> {
  const r = await call(b, method, path, { body, headers });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
}

/** GET twice: the second is the one a cache answers; both must be the same. */
async function getTwice(b: Broker, path: string, headers: Record<string, string> = {}) {
  const first = await call(b, 'GET', path, { headers });
  const second = await call(b, 'GET', path, { headers });
  return { first, second };
}

// With pipeline threads, `--frontOps none` runs every GET in one of them: its answer is transferred to the front,
// which detaches the buffer it sends (a cached answer handed out as is hung the second GET).
const variants: Array<[name: string, pool: boolean, args: string[]]> = [
  ['on an inline broker', false, []],
  ['on a broker with pipeline threads', true, []],
  ['on a broker whose pipeline threads run every GET (--frontOps none)', true, ['--frontOps', 'none']],
];
for (const [name, pool, args] of variants) {
  t.test(name, async (t) => {
    const b = await startBroker(args, {}, { pool });
    t.teardown(() => b.stop());
    const id = `urn:ngsi-ld:Room:${pool ? 'p' : 'i'}1`;
    await ok(b, 'POST', `${NGSI}/entities`, { id, type: 'Room', temperature: prop(20), name: prop('kitchen') });

    t.test('a PATCH, a PUT, a POST of attributes and a merge each show in the next GET', async (t) => {
      let r = await getTwice(b, url(id, '?options=keyValues'));
      t.equal(r.second.json.temperature, 20);
      t.same(r.second.json, r.first.json);
      await ok(b, 'PATCH', url(id, '/attrs'), { temperature: prop(21) });
      r = await getTwice(b, url(id, '?options=keyValues'));
      t.equal(r.first.json.temperature, 21);
      t.equal(r.second.json.temperature, 21);
      await ok(b, 'PATCH', url(id, '/attrs/temperature'), { value: 22 });
      t.equal((await call(b, 'GET', url(id, '?options=keyValues'))).json.temperature, 22);
      await ok(b, 'POST', url(id, '/attrs'), { humidity: prop(50) });
      t.equal((await call(b, 'GET', url(id, '?options=keyValues'))).json.humidity, 50);
      await ok(b, 'PATCH', url(id), { temperature: prop(23) });
      t.equal((await call(b, 'GET', url(id, '?options=keyValues'))).json.temperature, 23);
      await ok(b, 'PUT', url(id), { type: 'Room', temperature: prop(24) });
      const replaced = (await call(b, 'GET', url(id, '?options=keyValues'))).json;
      t.equal(replaced.temperature, 24);
      t.equal(replaced.name, undefined, 'the replace removed name');
      await ok(b, 'DELETE', url(id, '/attrs/temperature'));
      t.equal((await call(b, 'GET', url(id, '?options=keyValues'))).json.temperature, undefined);
      await ok(b, 'POST', url(id, '/attrs'), { temperature: prop(25), humidity: prop(50) });
    });

    t.test('a batch upsert (run by a pipeline thread when there are some) shows in the next GET', async (t) => {
      await getTwice(b, url(id));
      await ok(b, 'POST', `${NGSI}/entityOperations/upsert?options=update`, [{ id, type: 'Room', temperature: prop(30) }]);
      const r = await getTwice(b, url(id));
      t.equal(r.first.json.temperature.value, 30);
      t.equal(r.second.json.temperature.value, 30);
    });

    t.test('each representation, attrs selection and media type has its own answer', async (t) => {
      const normalized = (await getTwice(b, url(id))).second;
      t.same(normalized.json.temperature.type, 'Property');
      t.match(normalized.headers.get('link') ?? '', /rel="http:\/\/www.w3.org\/ns\/json-ld#context"/);
      const kv = (await getTwice(b, url(id, '?options=keyValues'))).second;
      t.equal(kv.json.temperature, 30);
      const concise = (await getTwice(b, url(id, '?format=concise'))).second;
      t.same(concise.json.temperature, 30);
      const onlyHumidity = (await getTwice(b, url(id, '?attrs=humidity'))).second;
      t.equal(onlyHumidity.json.temperature, undefined);
      t.equal(onlyHumidity.json.humidity.value, 50);
      const ld = (await getTwice(b, url(id), { Accept: 'application/ld+json' })).second;
      t.equal(ld.headers.get('content-type'), 'application/ld+json');
      t.ok(ld.json['@context'], 'application/ld+json carries @context');
      t.equal(ld.headers.get('link'), null);
      const plain = (await getTwice(b, url(id))).second;
      t.equal(plain.json['@context'], undefined, 'application/json after ld+json: no @context member');
      t.equal(plain.headers.get('content-type'), 'application/json');
      const none = (await getTwice(b, url(id, '?attrs=nothing'))).second;
      t.equal(none.status, 404);
      const wrongType = (await getTwice(b, url(id, '?type=Car'))).second;
      t.equal(wrongType.status, 404);
      const badOption = (await getTwice(b, url(id, '?options=keyValues,concise'))).second;
      t.equal(badOption.status, 400);
    });

    t.test('the same entity through another @context (Link) is compacted with that one', async (t) => {
      const hosted = await call(b, 'POST', `${NGSI}/jsonldContexts`, {
        body: { '@context': { warmth: 'https://uri.etsi.org/ngsi-ld/default-context/temperature' } },
      });
      t.equal(hosted.status, 201, hosted.text);
      const link = {
        Link: `<${b.url}${hosted.headers.get('location')}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`,
      };
      t.equal((await getTwice(b, url(id, '?options=keyValues'))).second.json.temperature, 30);
      const other = await getTwice(b, url(id, '?options=keyValues'), link);
      t.equal(other.first.json.warmth, 30, other.first.text);
      t.equal(other.second.json.warmth, 30);
      t.equal(other.second.json.temperature, undefined);
      t.equal((await call(b, 'GET', url(id, '?options=keyValues'))).json.temperature, 30, 'and the default @context again');
    });

    t.test('tenants: the same id in two tenants answers each its own', async (t) => {
      const a = { 'NGSILD-Tenant': pool ? 'cachepa' : 'cacheia' };
      const c = { 'NGSILD-Tenant': pool ? 'cachepc' : 'cacheic' };
      await ok(b, 'POST', `${NGSI}/entities`, { id, type: 'Room', temperature: prop(1) }, a);
      await ok(b, 'POST', `${NGSI}/entities`, { id, type: 'Room', temperature: prop(2) }, c);
      t.equal((await getTwice(b, url(id, '?options=keyValues'), a)).second.json.temperature, 1);
      t.equal((await getTwice(b, url(id, '?options=keyValues'), c)).second.json.temperature, 2);
      t.equal((await getTwice(b, url(id, '?options=keyValues'))).second.json.temperature, 30);
    });

    t.test('a delete, a purge and a create again with other content', async (t) => {
      await getTwice(b, url(id));
      await ok(b, 'DELETE', url(id));
      t.equal((await getTwice(b, url(id))).second.status, 404);
      await ok(b, 'POST', `${NGSI}/entities`, { id, type: 'Room', temperature: prop(40) });
      t.equal((await getTwice(b, url(id, '?options=keyValues'))).second.json.temperature, 40);
      await ok(b, 'DELETE', `${NGSI}/entities?type=Room`);
      t.equal((await getTwice(b, url(id, '?options=keyValues'))).second.status, 404);
      await ok(b, 'POST', `${NGSI}/entities`, { id, type: 'Room', temperature: prop(41) });
      t.equal((await getTwice(b, url(id, '?options=keyValues'))).second.json.temperature, 41);
    });
  });
}
