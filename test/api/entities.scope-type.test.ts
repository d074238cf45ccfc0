// Scope (CIM 009 v1.8 §4.18) and types (§4.16) in the attribute operations: Update replaces an existing scope and
// adds types, Append replaces or (noOverwrite) adds to the scope, DELETE .../attrs/scope removes it, batch update
// adds types; and a batch update that keeps attributes (noOverwrite) reports them in a 207 (§5.6.9).
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
let n = 0;

t.before(async () => {
  broker = await startBroker();
});
t.teardown(async () => {
  await broker.stop();
});

/** A new Building (with `scope` when given) and its id. */
async function building(extra: Record<string, unknown> = {}): Promise<string> {
  const id = `urn:ngsi-ld:Building:st${++n}`;
  const r = await call(broker, 'POST', `${NGSI}/entities`, { body: { id, type: 'Building', ...extra } });
  if (r.status !== 201) throw new Error(r.text);
  return id;
}
const get = async (id: string) => (await call(broker, 'GET', `${NGSI}/entities/${id}`)).json;
const patch = (id: string, body: unknown) => call(broker, 'PATCH', `${NGSI}/entities/${id}/attrs`, { body });
const post = (id: string, body: unknown, qs = '') => call(broker, 'POST', `${NGSI}/entities/${id}/attrs${qs}`, { body });

t.test('PATCH .../attrs with scope replaces the scope of an entity that has one; 207 for one that has none', async (t) => {
  const id = await building({ scope: '/Madrid/Gardens/ParqueNorte' });
  const r = await patch(id, { scope: '/CompanyA/OrganizationB/UnitC' });
  t.equal(r.status, 204, r.text);
  t.equal((await get(id)).scope, '/CompanyA/OrganizationB/UnitC');
  const bare = await building();
  const none = await patch(bare, { scope: '/CompanyA' });
  t.equal(none.status, 207, none.text);
  t.same(
    none.json.notUpdated.map((x: { attributeName: string }) => x.attributeName),
    ['scope'],
  );
  t.notOk('scope' in (await get(bare)), 'the entity still has no scope');
});

t.test('PATCH .../attrs with type adds the types; a type it has changes nothing', async (t) => {
  const id = await building({ name: { type: 'Property', value: 'x' } });
  t.equal((await patch(id, { type: 'Vehicle' })).status, 204);
  t.same((await get(id)).type, ['Building', 'Vehicle']);
  t.equal((await patch(id, { type: ['Vehicle', 'Car'] })).status, 204);
  t.same((await get(id)).type, ['Building', 'Vehicle', 'Car']);
  t.equal((await patch(id, { type: 'Building' })).status, 204);
  t.same((await get(id)).type, ['Building', 'Vehicle', 'Car']);
  const both = await patch(id, { type: 'Tower', name: { type: 'Property', value: 'y' } });
  t.equal(both.status, 204, both.text);
  const e = await get(id);
  t.equal(e.name.value, 'y');
  t.same(e.type, ['Building', 'Vehicle', 'Car', 'Tower']);
  const other = await patch(id, { id: 'urn:ngsi-ld:Building:other', name: { type: 'Property', value: 'z' } });
  t.equal(other.status, 400, "an id that is not the path's");
});

t.test('POST .../attrs with scope replaces it, or with noOverwrite adds to it; type alone is written', async (t) => {
  const id = await building({ scope: '/Madrid/Gardens/ParqueNorte' });
  t.equal((await post(id, { scope: '/CompanyA/OrganizationB/UnitC' })).status, 204);
  t.equal((await get(id)).scope, '/CompanyA/OrganizationB/UnitC');
  const id2 = await building({ scope: '/Madrid/Gardens/ParqueNorte' });
  t.equal((await post(id2, { scope: '/CompanyA/OrganizationB/UnitC' }, '?options=noOverwrite')).status, 204);
  t.same((await get(id2)).scope, ['/Madrid/Gardens/ParqueNorte', '/CompanyA/OrganizationB/UnitC']);
  const bare = await building();
  t.equal((await post(bare, { scope: ['/a', '/b'] }, '?options=noOverwrite')).status, 204);
  t.same((await get(bare)).scope, ['/a', '/b'], 'noOverwrite on an entity without scope sets it');
  t.equal((await post(bare, { type: 'Vehicle' })).status, 204);
  t.same((await get(bare)).type, ['Building', 'Vehicle'], 'an append of a type alone is written');
  const bad = await post(bare, { scope: 'no-slash' });
  t.equal(bad.status, 400, 'a scope that is not a scope');
  t.equal(bad.json.type, `${ERR}BadRequestData`);
  for (const scope of ['/a\u0000b', ['/a', '/b/\u0001']]) {
    const control = await post(bare, { scope });
    t.equal(control.status, 400, `a control character in a level: ${JSON.stringify(scope)}`);
    t.equal(control.json.type, `${ERR}BadRequestData`);
  }
  t.same((await get(bare)).scope, ['/a', '/b'], 'the scope as it was');
});

t.test('DELETE .../attrs/scope removes the scope; 404 when there is none', async (t) => {
  const id = await building({ scope: '/Madrid/Gardens/ParqueNorte' });
  const r = await call(broker, 'DELETE', `${NGSI}/entities/${id}/attrs/scope`);
  t.equal(r.status, 204, r.text);
  t.strictSame(await get(id), { id, type: 'Building' });
  const again = await call(broker, 'DELETE', `${NGSI}/entities/${id}/attrs/scope`);
  t.equal(again.status, 404);
  t.equal(again.json.type, `${ERR}ResourceNotFound`);
});

t.test("batch update adds the entries' types; noOverwrite keeping attributes answers 207 naming them", async (t) => {
  const a = await building({ name: { type: 'Property', value: 'A' } });
  const b = await building({ name: { type: 'Property', value: 'B' } });
  const types = await call(broker, 'POST', `${NGSI}/entityOperations/update`, {
    body: [a, b].map((id) => ({ id, type: ['Building', 'Vehicle'] })),
  });
  t.equal(types.status, 204, types.text);
  t.same((await get(a)).type, ['Building', 'Vehicle']);
  t.same((await get(b)).type, ['Building', 'Vehicle']);
  const kept = await call(broker, 'POST', `${NGSI}/entityOperations/update?options=noOverwrite`, {
    body: [
      { id: a, type: 'Building', name: { type: 'Property', value: 'new' } },
      { id: b, type: 'Building', name: { type: 'Property', value: 'new' }, height: { type: 'Property', value: 3 } },
    ],
  });
  t.equal(kept.status, 207, kept.text);
  t.same(kept.json.success, []);
  t.same(
    kept.json.errors.map((e: { entityId: string }) => e.entityId),
    [a, b],
  );
  t.match(kept.json.errors[0].error.detail, /not updated: name \(they exist and noOverwrite was asked\)/);
  t.equal(kept.json.errors[0].error.type, `${ERR}BadRequestData`);
  t.equal((await get(a)).name.value, 'A', 'kept');
  const eb = await get(b);
  t.equal(eb.name.value, 'B', 'kept');
  t.equal(eb.height.value, 3, 'the new attribute of the same entry is added');
  const fresh = await call(broker, 'POST', `${NGSI}/entityOperations/update?options=noOverwrite`, {
    body: [{ id: a, type: 'Building', colour: { type: 'Property', value: 'red' } }],
  });
  t.equal(fresh.status, 204, 'only new attributes: nothing kept, 204');
});
