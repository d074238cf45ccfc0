// A query page is assembled from the rendered bytes of its entities kept from earlier queries (ops/query-fragments.ts,
// embdb entity-cache.ts): the answer is the one rendering afresh gives, in every media type and representation and
// under every @context, asked in turn; a write is seen by the next query; and in the pool (whose answers are
// transferred to the front) as inline.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld';

for (const pool of [false, true]) {
  t.test(pool ? 'in the pool' : 'inline', async (t) => {
    const broker: Broker = await startBroker([], {}, { pool });
    t.teardown(() => broker.stop());
    const body = [1, 2, 3].map((k) => ({
      id: `urn:ngsi-ld:Kept:${k}`,
      type: 'Kept',
      speed: { type: 'Property', value: k },
      name: { type: 'Property', value: `n${k}` },
      location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [2 + k / 1000, 48] } },
    }));
    const made = await call(broker, 'POST', `${NGSI}/entityOperations/create`, { body });
    t.equal(made.status, 201, made.text);
    const hosted = await call(broker, 'POST', `${NGSI}/jsonldContexts`, {
      body: {
        '@context': {
          Kept: 'https://uri.etsi.org/ngsi-ld/default-context/Kept',
          vitesse: 'https://uri.etsi.org/ngsi-ld/default-context/speed',
        },
      },
    });
    t.equal(hosted.status, 201, hosted.text);
    const link = `<${broker.url}${hosted.headers.get('location')}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`;

    /** Each entity as a retrieve renders it with the same parameters and headers: what the page must hold. */
    async function expected(params: string, headers: Record<string, string>): Promise<unknown[]> {
      const out: unknown[] = [];
      for (const k of [1, 2, 3]) {
        const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Kept:${k}?${params}`, { headers });
        out.push(r.json);
      }
      return out;
    }

    const cases: Array<[string, string, Record<string, string>]> = [
      ['json', '', {}],
      ['ld+json', '', { accept: 'application/ld+json' }],
      ['keyValues', 'options=keyValues', {}],
      ['concise with sysAttrs', 'format=concise&options=sysAttrs', {}],
      ['attrs', 'attrs=speed', {}],
      ['pick', 'pick=id,name', {}],
      ['another @context', '', { link }],
      ['another @context, ld+json', 'options=keyValues', { link, accept: 'application/ld+json' }],
    ];
    for (let round = 0; round < 2; round++) {
      for (const [name, params, headers] of cases) {
        const r = await call(broker, 'GET', `${NGSI}/entities?type=Kept${params === '' ? '' : `&${params}`}`, { headers });
        t.equal(r.status, 200, `${name}: ${r.text}`);
        t.same(r.json, await expected(params, headers), `round ${round}, ${name}: as rendered afresh`);
        if (headers.accept === undefined) t.match(r.headers.get('link'), /rel="http:\/\/www.w3.org\/ns\/json-ld#context"/, `${name}: Link`);
      }
    }
    const ld = await call(broker, 'GET', `${NGSI}/entities?type=Kept`, { headers: { accept: 'application/ld+json' } });
    t.equal(ld.headers.get('content-type'), 'application/ld+json');
    t.ok(
      (ld.json as Array<Record<string, unknown>>).every((e) => e['@context'] === CORE || e['@context'] !== undefined),
      'each item carries @context',
    );

    const patched = await call(broker, 'PATCH', `${NGSI}/entities/urn:ngsi-ld:Kept:2/attrs`, {
      body: { speed: { type: 'Property', value: 20 } },
    });
    t.equal(patched.status, 204, patched.text);
    const after = await call(broker, 'GET', `${NGSI}/entities?type=Kept&options=keyValues`);
    t.same(
      (after.json as Array<{ speed: number }>).map((e) => e.speed),
      [1, 20, 3],
      'the patched value, the others as they were',
    );
    const deleted = await call(broker, 'DELETE', `${NGSI}/entities/urn:ngsi-ld:Kept:1`);
    t.equal(deleted.status, 204);
    const left = await call(broker, 'GET', `${NGSI}/entities?type=Kept&options=keyValues`);
    t.same(
      (left.json as Array<{ id: string }>).map((e) => e.id),
      ['urn:ngsi-ld:Kept:2', 'urn:ngsi-ld:Kept:3'],
    );
    const geo = await call(broker, 'GET', `${NGSI}/entities?type=Kept`, { headers: { accept: 'application/geo+json' } });
    t.equal(geo.status, 200, geo.text);
    t.equal((geo.json as { features: unknown[] }).features.length, 2, 'GeoJSON as before');
  });
}
