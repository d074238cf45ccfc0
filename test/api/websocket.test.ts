// The WebSocket transport (README "WebSocket", seed 000 §5.1 rule 2): messages run the HTTP request path and are
// answered by correlation id, many in flight on one connection; bad messages answered 400 with the connection kept;
// frames the protocol forbids close the connection (RFC 6455) and nothing else; a client that stops reading is closed
// once its unread answers pass --wsMaxBackpressure, without slowing another.
import t from 'tap';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { RawWs, WsClient, frame, textFrame } from './helpers/ws-client.js';
import { rawExchange } from './helpers/raw-http.js';

let broker: Broker;
const BACKPRESSURE = 256 * 1024;

t.before(async () => {
  broker = await startBroker(['--wsMaxBackpressure', String(BACKPRESSURE), '--maxBodySize', '100000'], {}, { http: true });
  const big = { id: 'urn:ngsi-ld:Big:1', type: 'Big', blob: { type: 'Property', value: 'x'.repeat(8192) } };
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: big })).status, 201);
  const small = { id: 'urn:ngsi-ld:Small:1', type: 'Small', n: { type: 'Property', value: 1 } };
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: small })).status, 201);
});
t.teardown(() => broker.stop());

const retrieve = (id: string, query?: string) => ({ method: 'GET', path: `${NGSI}/entities/${id}`, query });

t.test('a request runs the HTTP path and is answered with its correlation id, status, headers and body', async (t) => {
  const c = await WsClient.open(broker.port);
  const created = await c.request({
    method: 'POST',
    path: `${NGSI}/entities`,
    body: { id: 'urn:ngsi-ld:Room:ws1', type: 'Room', temperature: { type: 'Property', value: 21 } },
  });
  t.equal(created.metadata.status, 201);
  t.equal(created.metadata.headers.Location, `${NGSI}/entities/urn:ngsi-ld:Room:ws1`);
  t.equal(created.body, undefined);
  const got = await c.request(retrieve('urn:ngsi-ld:Room:ws1', 'options=keyValues'));
  t.equal(got.metadata.status, 200);
  t.match(got.metadata.headers['Content-Type'], /^application\/json/);
  t.same(got.body, { id: 'urn:ngsi-ld:Room:ws1', type: 'Room', temperature: 21 });
  // A bad URL parameter is the pipeline's 400 as over HTTP (CIM 009 §6.3.20).
  const bad = await c.request(retrieve('urn:ngsi-ld:Room:ws1', 'nonsense=1'));
  t.equal(bad.metadata.status, 400);
  t.equal(bad.body.type, 'https://uri.etsi.org/ngsi-ld/errors/InvalidRequest');
  // The tenant and Link headers of the metadata reach the pipeline.
  const other = await c.request({ ...retrieve('urn:ngsi-ld:Room:ws1'), headers: { 'NGSILD-Tenant': 'nobody' } });
  t.equal(other.metadata.status, 404);
  t.equal(other.body.type, 'https://uri.etsi.org/ngsi-ld/errors/NonexistentTenant');
  // HEAD: the GET's headers, no body; DELETE: 204 without body.
  const head = await c.request({ method: 'HEAD', path: `${NGSI}/entities/urn:ngsi-ld:Room:ws1` });
  t.equal(head.metadata.status, 200);
  t.equal(head.body, undefined);
  const del = await c.request({ method: 'DELETE', path: `${NGSI}/entities/urn:ngsi-ld:Room:ws1` });
  t.equal(del.metadata.status, 204);
  t.equal(del.body, undefined);
  await c.close();
});

t.test('10,000 requests pipelined on one connection are all answered, each once, with its own correlation id', async (t) => {
  const c = await WsClient.open(broker.port);
  const N = 10_000;
  const answers: Array<Promise<{ i: number; status: number; id: unknown }>> = [];
  for (let i = 0; i < N; i++) {
    const id = i % 2 === 0 ? 'urn:ngsi-ld:Small:1' : 'urn:ngsi-ld:Small:none';
    answers.push(c.request(retrieve(id, 'options=keyValues'), `r${i}`).then((a) => ({ i, status: a.metadata.status, id: a.body?.id })));
  }
  const all = await Promise.all(answers);
  let wrong = 0;
  for (const a of all) {
    const expected = a.i % 2 === 0 ? 200 : 404;
    if (a.status !== expected || (expected === 200 && a.id !== 'urn:ngsi-ld:Small:1')) wrong++;
  }
  t.equal(wrong, 0, 'every answer is the one of its request');
  t.equal(c.others.length, 0, 'no answer without a pending correlation id');
  await c.close();
});

t.test('malformed messages are answered 400 (with their correlation id when it could be read); the connection stays', async (t) => {
  const c = await WsClient.open(broker.port);
  const cases: Array<[string, string | null, RegExp]> = [
    ['not json', null, /JSON object/],
    ['[1,2]', null, /"metadata" object/],
    ['{"metadata": 3}', null, /"metadata" object/],
    ['{"metadata": {"method": "GET", "path": "/ngsi-ld/v1/types"}}', null, /correlationId/],
    [JSON.stringify({ metadata: { method: 'GET', path: '/x', correlationId: 'y'.repeat(257) } }), null, /correlationId/],
    [JSON.stringify({ metadata: { method: 'GET', path: '/x', correlationId: 7 } }), null, /correlationId/],
    [JSON.stringify({ metadata: { method: 'G E T', path: '/x', correlationId: 'm1' } }), 'm1', /method/],
    [JSON.stringify({ metadata: { path: '/x', correlationId: 'm2' } }), 'm2', /method/],
    [JSON.stringify({ metadata: { method: 'GET', path: 'x', correlationId: 'm3' } }), 'm3', /path/],
    [JSON.stringify({ metadata: { method: 'GET', path: '/a b', correlationId: 'm4' } }), 'm4', /path/],
    [JSON.stringify({ metadata: { method: 'GET', path: '/a?b=1', correlationId: 'm5' } }), 'm5', /path/],
    [JSON.stringify({ metadata: { method: 'GET', path: '/a', query: 'x=\n', correlationId: 'm6' } }), 'm6', /query/],
    [JSON.stringify({ metadata: { method: 'GET', path: '/a', headers: [], correlationId: 'm7' } }), 'm7', /headers/],
    [JSON.stringify({ metadata: { method: 'GET', path: '/a', headers: { a: 1 }, correlationId: 'm8' } }), 'm8', /headers/],
    [JSON.stringify({ metadata: { method: 'GET', path: '/a', headers: { 'a b': 'x' }, correlationId: 'm9' } }), 'm9', /token/],
    [JSON.stringify({ metadata: { method: 'GET', path: '/a', correlationId: 'm10' }, extra: 1 }), 'm10', /only "metadata" and "body"/],
  ];
  for (const [text, cid, detail] of cases) {
    const answer = cid === null ? undefined : c.expect(cid);
    const before = c.others.length;
    c.send(text);
    const a = answer !== undefined ? await answer : (await c.othersAtLeast(before + 1))[before];
    t.equal(a.metadata.status, 400, text.slice(0, 60));
    t.equal(a.metadata.correlationId, cid);
    t.equal(a.body.type, 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData');
    t.match(a.body.detail, detail);
  }
  // A header value the HTTP servers refuse is refused the same way (request-head.ts).
  const nonAscii = await c.request({ ...retrieve('urn:ngsi-ld:Small:1'), headers: { Link: 'é' } });
  t.equal(nonAscii.metadata.status, 400);
  // A head larger than an HTTP request head may be: 431, as over HTTP.
  const large = await c.request({ ...retrieve('urn:ngsi-ld:Small:1'), headers: { 'x-big': 'a'.repeat(17_000) } });
  t.equal(large.metadata.status, 431);
  // A body past --maxBodySize: 413 PayloadTooLarge.
  const tooBig = await c.request({ method: 'POST', path: `${NGSI}/entities`, body: { id: 'urn:x:1', type: 'T', p: 'y'.repeat(100_001) } });
  t.equal(tooBig.metadata.status, 413);
  // A body that is not an entity: the pipeline's 400, nothing written.
  const notEntity = await c.request({ method: 'POST', path: `${NGSI}/entities`, body: [1, 2] });
  t.equal(notEntity.metadata.status, 400);
  // Unknown route and method: 404 and 405 as over HTTP.
  t.equal((await c.request({ method: 'GET', path: '/nothing' })).metadata.status, 404);
  t.equal((await c.request({ method: 'PUT', path: `${NGSI}/types` })).metadata.status, 405);
  // A binary frame holding a request is read as one.
  const bin = c.expect('b1');
  c.send(
    new TextEncoder().encode(
      JSON.stringify({ metadata: { method: 'GET', path: `${NGSI}/entities/urn:ngsi-ld:Small:1`, correlationId: 'b1' } }),
    ),
  );
  t.equal((await bin).metadata.status, 200);
  t.equal(c.closed, undefined, 'the connection is still open');
  await c.close();
});

t.test('frames the protocol forbids close that connection only (RFC 6455 §5.1, §5.2, §8.1); the broker serves on', async (t) => {
  const forbidden: Array<[string, Buffer]> = [
    ['a reserved opcode', frame(3, Buffer.from('x'))],
    ['RSV bits without an extension', frame(1, Buffer.from('x'), { rsv: 7 })],
    ['invalid UTF-8 in a text frame', frame(1, Buffer.from([0xc3, 0x28]))],
    ['a message over the payload limit', frame(2, Buffer.alloc(100_000 + 40_000, 0x20))],
    ['a continuation without a first fragment', frame(0, Buffer.from('x'))],
  ];
  for (const [name, bytes] of forbidden) {
    const raw = await RawWs.open(broker.port);
    raw.write(bytes);
    t.ok(await raw.ends(), `${name}: closed`);
    raw.destroy();
  }
  // uWS 20.43 does not check the mask bit (RFC 6455 §5.1 says a server closes on an unmasked frame): it takes the next
  // four bytes for the key and waits for a payload that never comes; the connection holds nothing and answers nothing
  // until the idle timeout (120 s) closes it.
  const unmasked = await RawWs.open(broker.port);
  unmasked.write(frame(1, Buffer.from(JSON.stringify({ metadata: { method: 'GET', path: '/x', correlationId: 'u' } })), { masked: false }));
  await new Promise((r) => setTimeout(r, 300));
  t.equal(unmasked.messages().length, 0, 'an unmasked frame is not taken as a request');
  unmasked.destroy();
  // Fragments of one message are one message.
  const raw = await RawWs.open(broker.port);
  const text = JSON.stringify({ metadata: { method: 'GET', path: `${NGSI}/entities/urn:ngsi-ld:Small:1`, correlationId: 'f1' } });
  raw.write(frame(1, Buffer.from(text.slice(0, 20)), { fin: false }));
  raw.write(frame(0, Buffer.from(text.slice(20))));
  const deadline = Date.now() + 5000;
  while (raw.messages().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const answer = raw.messages()[0];
  t.equal(answer.metadata.correlationId, 'f1');
  t.equal(answer.metadata.status, 200);
  raw.destroy();
  const c = await WsClient.open(broker.port);
  t.equal((await c.request(retrieve('urn:ngsi-ld:Small:1'))).metadata.status, 200);
  await c.close();
});

t.test('the upgrade is on /ngsi-ld/v1/ws only; a plain GET of it is an HTTP 404', async (t) => {
  await t.rejects(RawWs.open(broker.port, `${NGSI}/nothing`), /HTTP\/1.1 404/);
  const plain = await rawExchange(broker.port, `GET ${NGSI}/ws HTTP/1.1\r\nHost: x\r\n\r\n`);
  t.equal(plain.replies[0]?.status, 404);
});

t.test('a client that stops reading is closed past --wsMaxBackpressure; another connection is served meanwhile', async (t) => {
  // Its requests wait while a quarter of the bound is unread; once they fill --wsMaxQueueBytes too, or the answers in
  // flight take the unread bytes past the bound, the connection is closed.
  const broker = await startBroker(['--wsMaxBackpressure', String(BACKPRESSURE), '--wsMaxQueueBytes', '65536'], {}, { http: true });
  t.teardown(() => broker.stop());
  const big = { id: 'urn:ngsi-ld:Big:1', type: 'Big', blob: { type: 'Property', value: 'x'.repeat(8192) } };
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: big })).status, 201);
  const small = { id: 'urn:ngsi-ld:Small:1', type: 'Small', n: { type: 'Property', value: 1 } };
  t.equal((await call(broker, 'POST', `${NGSI}/entities`, { body: small })).status, 201);
  const raw = await RawWs.open(broker.port);
  raw.socket.pause();
  // 3,000 answers of 8 KiB: far more than the kernel's socket buffers and the bound together.
  const request = (i: number): Buffer =>
    textFrame(JSON.stringify({ metadata: { method: 'GET', path: `${NGSI}/entities/urn:ngsi-ld:Big:1`, correlationId: `s${i}` } }));
  // In bursts, as a client goes on sending: the later ones arrive once its unread answers hold up its queue.
  const bursts = (async () => {
    for (let b = 0; b < 20 && !raw.ended; b++) {
      const batch: Buffer[] = [];
      for (let i = 0; i < 150; i++) batch.push(request(b * 150 + i));
      raw.write(Buffer.concat(batch));
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const other = await WsClient.open(broker.port);
  t.equal((await other.request(retrieve('urn:ngsi-ld:Small:1'))).metadata.status, 200, 'another client is answered');
  const deadline = Date.now() + 20_000;
  const closing = (): boolean => broker.logs.some((l) => l.includes('the client does not read its answers'));
  while (!closing() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.ok(closing(), 'the broker closed the slow reader, saying why');
  const line = JSON.parse(broker.logs.find((l) => l.includes('the client does not read its answers'))!);
  t.ok(line.unread > BACKPRESSURE || (line.unread >= BACKPRESSURE / 4 && line.waiting > 60_000), 'past a bound, not before');
  await bursts;
  raw.socket.resume();
  t.ok(await raw.ends(10_000), 'the connection ends');
  t.ok(raw.received < 3000 * 8192, 'the client never got every answer');
  t.equal((await other.request(retrieve('urn:ngsi-ld:Small:1'))).metadata.status, 200, 'the other connection goes on');
  await other.close();
});

t.test('requests past --wsMaxQueueBytes waiting on one connection are answered 503 at once', async (t) => {
  // Threads of their own, so a request awaits its answer and the next messages wait their turn.
  const b = await startBroker(['--wsMaxInFlight', '1', '--wsMaxQueueBytes', '2000', '--connectionPoolSize', '1'], {}, { http: true });
  t.teardown(() => b.stop());
  const c = await WsClient.open(b.port);
  const answers = [];
  for (let i = 0; i < 200; i++) answers.push(c.request({ method: 'GET', path: `${NGSI}/types` }));
  const statuses = (await Promise.all(answers)).map((a) => a.metadata.status);
  t.ok(statuses.includes(200), 'the first are served');
  t.ok(statuses.includes(503), 'those past the bound are refused');
  t.ok(statuses.every((s) => s === 200 || s === 503));
  const refused = (await c.request({ method: 'GET', path: `${NGSI}/types` })).metadata.status;
  t.equal(refused, 200, 'and the connection serves once its queue is down');
  await c.close();
});

t.test('with --httpServer node the upgrade is refused in words: 501, the transport needs uWebSockets.js', async (t) => {
  const b = await startBroker(['--httpServer', 'node']);
  t.teardown(() => b.stop());
  await t.rejects(RawWs.open(b.port), /HTTP\/1.1 501/);
  const raw = await rawExchange(
    b.port,
    `GET ${NGSI}/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  t.equal(raw.replies[0]?.status, 501);
  t.match(raw.replies[0]!.body.toString(), /needs the uWebSockets.js server/);
});
