// Tenants (CIM 009 v1.8 §4.14): created by a creating operation only; an unknown tenant is 404 NonexistentTenant.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
t.before(async () => {
  broker = await startBroker();
});
t.teardown(async () => {
  await broker.stop();
});

const entity = { id: 'urn:ngsi-ld:Shop:1', type: 'Shop', open: { type: 'Property', value: true } };

t.test('a request on an unknown tenant is 404 NonexistentTenant and creates no tenant', async (t) => {
  const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Shop:1`, { headers: { 'NGSILD-Tenant': 'ghost' } });
  t.equal(r.status, 404);
  t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/NonexistentTenant');
  const again = await call(broker, 'DELETE', `${NGSI}/entities/urn:ngsi-ld:Shop:1`, { headers: { 'NGSILD-Tenant': 'ghost' } });
  t.equal(again.json.type, 'https://uri.etsi.org/ngsi-ld/errors/NonexistentTenant');
});

t.test('a create makes the tenant; its entities are not seen from other tenants', async (t) => {
  const c = await call(broker, 'POST', `${NGSI}/entities`, { body: entity, headers: { 'NGSILD-Tenant': 'north' } });
  t.equal(c.status, 201, c.text);
  t.equal((await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Shop:1`, { headers: { 'NGSILD-Tenant': 'north' } })).status, 200);
  t.equal((await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Shop:1`)).status, 404, 'not in the default tenant');
  t.equal(
    (await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Shop:1`, { headers: { 'NGSILD-Tenant': 'NORTH' } })).status,
    200,
    'tenant names are lower-cased',
  );
});

t.test('a refused create (bad body) leaves no tenant behind', async (t) => {
  const c = await call(broker, 'POST', `${NGSI}/entities`, { body: { id: 'bad id', type: 'Shop' }, headers: { 'NGSILD-Tenant': 'south' } });
  t.equal(c.status, 400);
  const r = await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:Shop:1`, { headers: { 'NGSILD-Tenant': 'south' } });
  t.equal(r.json.type, 'https://uri.etsi.org/ngsi-ld/errors/NonexistentTenant');
});

t.test('a tenant name with bad characters is a 400', async (t) => {
  for (const name of ['a b', 'x/y', 'ü', 'a'.repeat(60), "a'b"]) {
    const r = await call(broker, 'POST', `${NGSI}/entities`, {
      body: entity,
      headers: { 'NGSILD-Tenant': encodeURIComponent(name) === name ? name : name.replace(/[^\x20-\x7e]/g, '?') },
    });
    t.equal(r.status, 400, `${name}: ${r.text}`);
  }
});
