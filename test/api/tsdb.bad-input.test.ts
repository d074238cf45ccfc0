// --troe tsdb takes what a client sends into SQL text and table names only quoted or checked (plugins/history/tsdb
// sql.ts lit, settings.ts tenantKey): ids, datasetIds and instanceIds holding quotes, and tenants holding '-' or
// '_' in the same places, are kept apart and read back as written, never as SQL.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { tsdbArgs } from './helpers/troe.js';

let broker: Broker;
t.before(async () => {
  broker = await startBroker(tsdbArgs());
});
t.teardown(async () => {
  await broker.stop();
});

t.test('quotes in an entity id and a datasetId are data, not SQL', async (t) => {
  const ids = ["urn:ngsi-ld:T:o'brien", "urn:ngsi-ld:T:x'or'1'='1", 'urn:ngsi-ld:T:plain'];
  for (const id of ids) {
    const r = await call(broker, 'POST', `${NGSI}/entities`, {
      body: {
        id,
        type: 'T',
        v: [
          { type: 'Property', value: id },
          { type: 'Property', value: 2, datasetId: "urn:ds:it's" },
        ],
      },
    });
    t.equal(r.status, 201, r.text);
  }
  for (const id of ids) {
    const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${encodeURIComponent(id)}`);
    t.equal(r.status, 200, r.text);
    t.equal(r.json.id, id);
    t.same(
      r.json.v.map((i: { value: unknown; datasetId?: string }) => [i.value, i.datasetId]),
      [
        [id, undefined],
        [2, "urn:ds:it's"],
      ],
    );
  }
  const one = await call(broker, 'GET', `${NGSI}/temporal/entities?id=${encodeURIComponent(ids[1]!)}&type=T`);
  t.equal(one.status, 200, one.text);
  t.same(
    one.json.map((e: { id: string }) => e.id),
    [ids[1]],
    'an id that reads like SQL selects itself only',
  );
  const ds = await call(
    broker,
    'GET',
    `${NGSI}/temporal/entities/${encodeURIComponent(ids[0]!)}?datasetId=${encodeURIComponent("urn:ds:it's")}`,
  );
  t.equal(ds.status, 200, ds.text);
  t.same(
    ds.json.v.map((i: { value: unknown }) => i.value),
    [2],
  );
  const gone = await call(
    broker,
    'DELETE',
    `${NGSI}/temporal/entities/${encodeURIComponent(ids[0]!)}/attrs/v/${encodeURIComponent("urn:ngsi-ld:attribute:instance:x'y")}`,
  );
  t.equal(gone.status, 404, 'an instanceId with a quote that is not there is not found');
});

t.test("tenants 'a-b' and 'a_b' and the default tenant keep separate histories", async (t) => {
  const id = 'urn:ngsi-ld:T:shared';
  for (const tenant of ['a-b', 'a_b', '']) {
    const headers: Record<string, string> = tenant === '' ? {} : { 'NGSILD-Tenant': tenant };
    const r = await call(broker, 'POST', `${NGSI}/entities`, {
      headers,
      body: { id, type: 'T', who: { type: 'Property', value: tenant } },
    });
    t.equal(r.status, 201, r.text);
  }
  for (const tenant of ['a-b', 'a_b', '']) {
    const headers: Record<string, string> = tenant === '' ? {} : { 'NGSILD-Tenant': tenant };
    const r = await call(broker, 'GET', `${NGSI}/temporal/entities/${id}`, { headers });
    t.equal(r.status, 200, r.text);
    t.same(
      r.json.who.map((i: { value: string }) => i.value),
      [tenant],
      `tenant '${tenant}' sees its own history`,
    );
  }
});

t.test('a query naming thousands of ids, or of attributes, is split into requests QuestDB takes', async (t) => {
  const real = ['urn:ngsi-ld:Many:1', 'urn:ngsi-ld:Many:2'];
  for (const id of real) {
    const r = await call(broker, 'POST', `${NGSI}/entities`, { body: { id, type: 'Many', v: { type: 'Property', value: 1 } } });
    t.equal(r.status, 201, r.text);
  }
  const ids = Array.from({ length: 3000 }, (_, i) => `urn:ngsi-ld:Many:absent-${String(i).padStart(6, '0')}-${'x'.repeat(20)}`);
  const r = await call(broker, 'POST', `${NGSI}/temporal/entityOperations/query`, {
    body: { type: 'Query', entities: [...ids, ...real].map((id) => ({ id, type: 'Many' })) },
  });
  t.equal(r.status, 200, r.text);
  t.same(r.json.map((e: { id: string }) => e.id).sort(), real);
  const attrs = Array.from({ length: 2000 }, (_, i) => `attribute${String(i).padStart(5, '0')}${'y'.repeat(20)}`);
  const byAttrs = await call(broker, 'POST', `${NGSI}/temporal/entityOperations/query`, {
    body: { type: 'Query', entities: [{ type: 'Many' }], attrs: [...attrs, 'v'] },
  });
  t.equal(byAttrs.status, 200, byAttrs.text);
  t.same(byAttrs.json.map((e: { id: string }) => e.id).sort(), real);
});

// (A quote in a type is refused by the broker before any history sees it.)
t.test('a type holding % or _ selects its own entities only, not those the LIKE pattern also matches', async (t) => {
  const kinds = ['urn:ngsi-ld:Kind:50%25', 'urn:ngsi-ld:Kind:50X25', 'urn:ngsi-ld:Kind:a_b', 'urn:ngsi-ld:Kind:aXb'];
  for (const [i, type] of kinds.entries()) {
    const r = await call(broker, 'POST', `${NGSI}/entities`, {
      body: { id: `urn:ngsi-ld:K:${i}`, type, v: { type: 'Property', value: i } },
    });
    t.equal(r.status, 201, r.text);
  }
  for (const [i, type] of kinds.entries()) {
    const r = await call(broker, 'GET', `${NGSI}/temporal/entities?type=${encodeURIComponent(type)}`);
    t.equal(r.status, 200, r.text);
    t.same(
      r.json.map((e: { id: string }) => e.id),
      [`urn:ngsi-ld:K:${i}`],
      type,
    );
  }
});

// The writing thread makes each history row's ILP line itself (plugins/history/tsdb/ilp.ts, escaping as the client
// does: test/unit/tsdb-ilp.test.ts); QuestDB reads back exactly what was written, whatever the characters.
t.test('names and values with spaces, commas, equals, quotes, newlines, backslashes and unicode are read back as written', async (t) => {
  // (A quote, a backslash or a space in an id or a datasetId is refused as not a URI before any history sees it.)
  const id = "urn:ngsi-ld:T:a,b=c'dé😀";
  const values = ['a b,c=d', 'say "hi"\\n', 'line 1\nline 2\r\nend', 'back\\slash\\', 'ünïcødé 😀 日本', '{"json":"in a string"}', ' '];
  const attr = 'wörter';
  const ds = 'urn:ds:x,y=zé';
  const r = await call(broker, 'POST', `${NGSI}/entities`, {
    body: {
      id,
      type: 'T',
      [attr]: { type: 'Property', value: values[0] },
      o: { type: 'Property', value: { 'k ,=': 'v "\\\n' }, datasetId: ds },
    },
  });
  t.equal(r.status, 201, r.text);
  for (const v of values.slice(1)) {
    const p = await call(broker, 'PATCH', `${NGSI}/entities/${encodeURIComponent(id)}/attrs/${encodeURIComponent(attr)}`, {
      body: { type: 'Property', value: v },
    });
    t.equal(p.status, 204, p.text);
  }
  const h = await call(broker, 'GET', `${NGSI}/temporal/entities/${encodeURIComponent(id)}`);
  t.equal(h.status, 200, h.text);
  t.equal(h.json.id, id);
  t.same(
    h.json[attr].map((i: { value: unknown }) => i.value),
    values,
    'every value, in order',
  );
  t.same([h.json.o[0].value, h.json.o[0].datasetId], [{ 'k ,=': 'v "\\\n' }, ds]);
});
