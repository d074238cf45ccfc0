// Answers of the router for paths that are no operation as sent: an unknown route (404 ResourceNotFound, an NGSI-LD
// error type of CIM 009 v1.8 table 5.5.2-1) and a route whose identifier segment is empty (400 BadRequestData, as
// the operations' behaviour clauses say of a missing Entity Id or Attribute name, §5.6.2 to §5.6.15).
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
const ID = 'urn:ngsi-ld:Vehicle:empty-seg';
const INSTANCE = 'urn:ngsi-ld:Instance:1';

t.before(async () => {
  broker = await startBroker();
  const r = await call(broker, 'POST', `${NGSI}/entities`, { body: { id: ID, type: 'Vehicle', speed: { type: 'Property', value: 1 } } });
  if (r.status !== 201) throw new Error(r.text);
});
t.teardown(async () => {
  await broker.stop();
});

t.test('an unknown route is 404 ResourceNotFound, not a type NGSI-LD does not define', async (t) => {
  for (const path of ['/nothing/here', `${NGSI}/entitiez`, `${NGSI}/entities/${ID}/attrs/speed/extra`]) {
    const r = await call(broker, 'GET', path);
    t.equal(r.status, 404, path);
    t.equal(r.json?.type, `${ERR}ResourceNotFound`, path);
    t.equal(r.json?.status, 404, path);
  }
});

t.test('an empty entity id or attribute name in the path is 400 BadRequestData naming what is missing', async (t) => {
  const fragment = { speed: { type: 'Property', value: 2 } };
  const cases: Array<[string, string, unknown, string]> = [
    ['POST', `${NGSI}/entities//attrs/`, fragment, 'entity id'],
    ['PATCH', `${NGSI}/entities//attrs`, fragment, 'entity id'],
    ['PATCH', `${NGSI}/entities//attrs/speed`, { type: 'Property', value: 3 }, 'entity id'],
    ['DELETE', `${NGSI}/entities//attrs/speed`, undefined, 'entity id'],
    ['PUT', `${NGSI}/entities/${ID}/attrs//`, { type: 'Property', value: 3 }, 'attribute name'],
    ['GET', `${NGSI}/entities//`, undefined, 'entity id'],
    ['POST', `${NGSI}/temporal/entities//attrs`, fragment, 'entity id'],
    ['DELETE', `${NGSI}/temporal/entities//attrs/speed`, undefined, 'entity id'],
    ['DELETE', `${NGSI}/temporal/entities/${ID}/attrs//${INSTANCE}`, undefined, 'attribute name'],
    ['PATCH', `${NGSI}/temporal/entities//attrs/speed/${INSTANCE}`, { value: 4 }, 'entity id'],
    ['GET', `${NGSI}/csourceRegistrations//`, undefined, 'registration id'],
  ];
  for (const [method, path, body, what] of cases) {
    const r = await call(broker, method, path, body === undefined ? {} : { body });
    t.equal(r.status, 400, `${method} ${path}: ${r.text}`);
    t.equal(r.json?.type, `${ERR}BadRequestData`, `${method} ${path}`);
    t.match(r.json?.detail, what, `${method} ${path} names the ${what}`);
  }
  t.equal((await call(broker, 'GET', `${NGSI}/entities/${ID}`)).json?.speed?.value, 1, 'nothing was written');
});

t.test('the method is checked before the empty segment, and a trailing slash is the path without it', async (t) => {
  const wrongMethod = await call(broker, 'GET', `${NGSI}/entities//attrs`);
  t.equal(wrongMethod.status, 405, 'no GET on /entities/{id}/attrs, empty id or not');
  t.equal(wrongMethod.headers.get('allow'), 'POST, PATCH, OPTIONS');
  // `/entities/` is the collection /entities (RFC 9110 §4.2.3 leaves it to the server; the router strips one trailing
  // slash): a method the collection does not take is 405 with its Allow, even where the path with an identifier
  // would take it (ETSI 009_02_01, 013_02_03, 016_02_04, 029_01_01, 032_01_01 expect 405 there).
  for (const [method, path, allow] of [
    ['PATCH', `${NGSI}/entities/`, 'POST, GET, HEAD, DELETE, OPTIONS'],
    ['PUT', `${NGSI}/entities/`, 'POST, GET, HEAD, DELETE, OPTIONS'],
    ['DELETE', `${NGSI}/entities/${ID}/attrs/`, 'POST, PATCH, OPTIONS'],
    ['DELETE', `${NGSI}/temporal/entities/`, 'POST, GET, HEAD, OPTIONS'],
  ] as const) {
    const r = await call(broker, method, path, method === 'DELETE' ? {} : { body: { speed: { type: 'Property', value: 5 } } });
    t.equal(r.status, 405, `${method} ${path}`);
    t.equal(r.json?.type, `${ERR}MethodNotAllowed`, `${method} ${path}`);
    t.equal(r.headers.get('allow'), allow, `${method} ${path}: Allow`);
  }
  const neither = await call(broker, 'PUT', `${NGSI}/subscriptions/`, { body: {} });
  t.equal(neither.status, 405, 'PUT is neither on /subscriptions nor on /subscriptions/{id}');
  t.equal((await call(broker, 'GET', `${NGSI}/entities/${ID}`)).json?.speed?.value, 1, 'nothing was written');
  const options = await call(broker, 'OPTIONS', `${NGSI}/entities//attrs`);
  t.equal(options.status, 204, 'OPTIONS tells the methods of the path');
});
