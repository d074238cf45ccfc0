// The filters a query needs (CIM 009 v1.8 §5.7.2.4, §6.4.3.2): type, attrs naming an attribute, q, a geo-query or
// local=true; id or idPattern alone as Orion-LD has them (README "Tolerances for real clients"). `attrs` naming only
// entity members (id, type) selects nothing on its own: that query is 400 BadRequestData.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

let broker: Broker;
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';

t.before(async () => {
  broker = await startBroker();
  const r = await call(broker, 'POST', `${NGSI}/entityOperations/create`, {
    body: [
      { id: 'urn:ngsi-ld:Car:m1', type: 'Car', speed: { type: 'Property', value: 1 } },
      { id: 'urn:ngsi-ld:Car:m2', type: 'Car', speed: { type: 'Property', value: 2 } },
    ],
  });
  if (r.status !== 201) throw new Error(r.text);
});
t.teardown(async () => {
  await broker.stop();
});

const get = (q: string) => call(broker, 'GET', `${NGSI}/entities?${q}`);
const post = (body: unknown, qs = '') => call(broker, 'POST', `${NGSI}/entityOperations/query${qs}`, { body });

t.test('attrs naming only entity members is no filter: alone it is 400 BadRequestData', async (t) => {
  for (const attrs of ['id,type', 'id', 'type', 'scope,createdAt']) {
    const r = await get(`attrs=${attrs}`);
    t.equal(r.status, 400, `attrs=${attrs}: ${r.text}`);
    t.equal(r.json?.type, `${ERR}BadRequestData`, `attrs=${attrs}`);
  }
  const body = await post({ type: 'Query', attrs: ['id', 'type'] });
  t.equal(body.status, 400, body.text);
  t.equal(body.json?.type, `${ERR}BadRequestData`);
});

t.test('with an attribute among them, another filter or local=true, the query is answered', async (t) => {
  for (const q of ['attrs=id,speed', 'attrs=id,type&type=Car', 'attrs=id&local=true', 'attrs=id&q=speed>1']) {
    const r = await get(q);
    t.equal(r.status, 200, `${q}: ${r.text}`);
  }
  t.equal((await get('attrs=id,speed')).json?.length, 2);
  t.equal((await get('attrs=speed&q=speed>1')).json?.length, 1);
});

t.test('id or idPattern alone is a query, as Orion-LD answers it', async (t) => {
  const ids = await get('id=urn:ngsi-ld:Car:m1,urn:ngsi-ld:Car:m2');
  t.equal(ids.status, 200, ids.text);
  t.equal(ids.json?.length, 2);
  const pattern = await get(`idPattern=${encodeURIComponent('urn:ngsi-ld:Car:m.*')}`);
  t.equal(pattern.json?.length, 2, pattern.text);
  const nothing = await get('');
  t.equal(nothing.status, 400, 'no filter at all');
  t.equal(nothing.json?.type, `${ERR}BadRequestData`);
});
