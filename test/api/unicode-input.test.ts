// Request bodies are well-formed Unicode (CIM 009 §4.6.2 names, §4.5 values): a JSON escape writing a lone
// surrogate ("\ud800") is 400 BadRequestData wherever it is, since no UTF-8 encoder keeps it as sent: a stored
// name came back as "\ud800" from the thread that wrote it and as U+FFFD characters from every other one.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';

const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';
let broker: Broker;
t.before(async () => {
  broker = await startBroker(['--connectionPoolSize', '2']);
});
t.teardown(async () => {
  await broker.stop();
});

/** JSON text sent as is: `\\u` escapes stay escapes on the wire (a JS string would be UTF-8 encoded, losing them). */
const send = (method: string, path: string, text: string, contentType = 'application/json') =>
  call(broker, method, path, { raw: text, headers: { 'content-type': contentType } });

t.test('a lone surrogate escape in a name, id, type or value is 400 BadRequestData and nothing is stored', async (t) => {
  const seed = await send('POST', `${NGSI}/entities`, '{"id":"urn:ngsi-ld:U:seed","type":"U","a":{"type":"Property","value":1}}');
  t.equal(seed.status, 201, seed.text);
  const cases: Array<[string, string, string, string?]> = [
    ['an attribute name', 'POST', '{"id":"urn:ngsi-ld:U:1","type":"U","a\\ud800b":{"type":"Property","value":1}}'],
    ['a lone low surrogate in a name', 'POST', '{"id":"urn:ngsi-ld:U:1","type":"U","\\udc00":1}'],
    ['a reversed pair in a name', 'POST', '{"id":"urn:ngsi-ld:U:1","type":"U","a\\udc00\\ud800":1}'],
    ['the entity id', 'POST', '{"id":"urn:ngsi-ld:U:\\ud800","type":"U"}'],
    ['the entity type', 'POST', '{"id":"urn:ngsi-ld:U:1","type":"U\\ud800"}'],
    ['a value', 'POST', '{"id":"urn:ngsi-ld:U:1","type":"U","a":{"type":"Property","value":"x\\udc00y"}}'],
    ['a sub-attribute name', 'POST', '{"id":"urn:ngsi-ld:U:1","type":"U","a":{"type":"Property","value":1,"s\\ud800":1}}'],
    ['a language map key', 'POST', '{"id":"urn:ngsi-ld:U:1","type":"U","l":{"type":"LanguageProperty","languageMap":{"e\\ud800":"x"}}}'],
    [
      'an application/ld+json @context',
      'POST',
      '{"id":"urn:ngsi-ld:U:1","type":"U","@context":{"U":"https://example.org/\\ud800"}}',
      'application/ld+json',
    ],
  ];
  for (const [what, method, text, ct] of cases) {
    const r = await send(method, `${NGSI}/entities`, text, ct);
    t.equal(r.status, 400, `${what}: ${r.text}`);
    t.equal(r.json?.type, `${ERR}BadRequestData`, what);
    t.match(r.json?.detail, /not well-formed Unicode \(a lone surrogate escape\)/, what);
    t.ok(/^[\x20-\x7e]*$/.test(r.text), `${what}: the answer is plain ASCII JSON (the surrogate shown as an escape)`);
  }
  const others: Array<[string, string, string]> = [
    ['merge-patch', 'PATCH', `${NGSI}/entities/urn:ngsi-ld:U:seed`],
    ['append', 'POST', `${NGSI}/entities/urn:ngsi-ld:U:seed/attrs`],
    ['update', 'PATCH', `${NGSI}/entities/urn:ngsi-ld:U:seed/attrs`],
    ['partial update', 'PATCH', `${NGSI}/entities/urn:ngsi-ld:U:seed/attrs/a`],
  ];
  for (const [what, method, path] of others) {
    const r = await send(method, path, what === 'partial update' ? '{"value":"\\ud800"}' : '{"a\\ud800":{"type":"Property","value":2}}');
    t.equal(r.status, 400, `${what}: ${r.text}`);
  }
  const batch = await send('POST', `${NGSI}/entityOperations/upsert`, '[{"id":"urn:ngsi-ld:U:2","type":"U","b\\ud800":1}]');
  t.equal(batch.status, 400, `a batch: ${batch.text}`);
  const sub = await send(
    'POST',
    `${NGSI}/subscriptions`,
    '{"type":"Subscription","entities":[{"type":"U"}],"description":"\\ud800","notification":{"endpoint":{"uri":"http://127.0.0.1:1/n"}}}',
  );
  t.equal(sub.status, 400, `a subscription: ${sub.text}`);
  const ctx = await send('POST', `${NGSI}/jsonldContexts`, '{"@context":{"U":"https://example.org/\\udfff"}}');
  t.equal(ctx.status, 400, `a Hosted @context: ${ctx.text}`);
  const q = await send('POST', `${NGSI}/entityOperations/query`, '{"type":"Query","entities":[{"type":"U"}],"q":"a==\\"\\ud800\\""}');
  t.equal(q.status, 400, `a query body: ${q.text}`);

  const all = await call(broker, 'GET', `${NGSI}/entities?type=U`);
  t.same(
    all.json.map((e: { id: string }) => e.id),
    ['urn:ngsi-ld:U:seed'],
    'nothing else was stored',
  );
  t.same(Object.keys(all.json[0]).sort(), ['a', 'id', 'type'], 'the seed is unchanged');
  t.equal(all.json[0].a.value, 1);
  t.same((await call(broker, 'GET', `${NGSI}/attributes`)).json.attributeList, ['a'], '/attributes lists no mangled name');
});

t.test('a surrogate pair (escaped or UTF-8) is text: stored and read back alike by every thread', async (t) => {
  const escaped = await send(
    'POST',
    `${NGSI}/entities`,
    '{"id":"urn:ngsi-ld:V:1","type":"V","smile\\ud83d\\ude00":{"type":"Property","value":"\\ud83d\\ude00"},"back":{"type":"Property","value":"\\\\ud800"}}',
  );
  t.equal(escaped.status, 201, escaped.text);
  const utf8 = await send('POST', `${NGSI}/entities`, '{"id":"urn:ngsi-ld:V:2","type":"V","smile😀":{"type":"Property","value":"😀"}}');
  t.equal(utf8.status, 201, utf8.text);
  const texts = new Set<string>();
  for (let round = 0; round < 5; round++) {
    const replies = await Promise.all(Array.from({ length: 16 }, () => call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:V:1`)));
    for (const r of replies) texts.add(r.text);
  }
  t.equal(texts.size, 1, 'every read, from either thread, is the same bytes');
  const e = JSON.parse([...texts][0]!);
  t.equal(e['smile😀'].value, '😀');
  t.equal(e.back.value, '\\ud800', 'an escaped backslash is no surrogate');
  t.same((await call(broker, 'GET', `${NGSI}/entities/urn:ngsi-ld:V:2`)).json['smile😀'].value, '😀');
});
