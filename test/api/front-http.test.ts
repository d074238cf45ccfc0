// The front over bare sockets on both servers (issue 13): response headers that hold nothing a client could turn
// into a second header or a body, whatever ids and URLs they echo.
import t, { type Test } from 'tap';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startBroker, NGSI, type Broker } from './helpers/broker.js';
import { rawExchange, header, type RawReply } from './helpers/raw-http.js';

const SERVERS = ['uws', 'node'] as const;
const brokers = new Map<string, Broker>();
let contextServer: Server;
let contextBase: string;

t.before(async () => {
  // Serves one small @context at any path: @context URLs with odd characters resolve.
  contextServer = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/ld+json' });
    res.end(JSON.stringify({ '@context': { name: 'https://example.org/name' } }));
  });
  await new Promise<void>((r) => contextServer.listen(0, '127.0.0.1', r));
  contextBase = `http://127.0.0.1:${(contextServer.address() as AddressInfo).port}`;
  for (const server of SERVERS) brokers.set(server, await startBroker(['--httpServer', server, '--troe', 'embdb']));
});
t.teardown(async () => {
  for (const b of brokers.values()) await b.stop();
  contextServer.close();
});

/** The reply's header lines are header fields of visible ASCII: nothing a value held split a line or added one. */
function cleanHead(t: Test, r: RawReply, what: string): void {
  const lines = r.head.split('\r\n').slice(1, -1);
  t.ok(lines.every((l) => /^[A-Za-z0-9-]+: ?[\t\x20-\x7e]*$/.test(l)), `${what}: every header line is name: visible ASCII`);
  t.notOk(r.head.includes('\n\n') || /\r(?!\n)|(?<!\r)\n/.test(r.head), `${what}: no bare CR or LF`);
}

/** A value as an assertion message: TAP is line-based, and U+2028 or U+0085 would cut the message in two. */
const esc = (s: string): string => JSON.stringify(s).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
const get = (path: string, extra = ''): string => `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;
const problem = (r: RawReply): { status: number; type: string; detail: string } => JSON.parse(r.body.toString());

for (const server of SERVERS) {
  const port = (): number => brokers.get(server)!.port;

  t.test(`${server}: every header the broker writes is visible ASCII whatever the ids and URLs it echoes`, async (t) => {
    const ids = ['urn:ngsi-ld:T:a/b?c#d%41[e]', 'urn:ngsi-ld:T:caf\u00e9\u20ac', 'urn:ngsi-ld:T:\u0085x\u2028y', `urn:ngsi-ld:T:${server}`];
    for (const id of ids) {
      for (const [route, body] of [
        ['entities', { id, type: 'T' }],
        ['temporal/entities', { id: `${id}:t`, type: 'T', v: [{ type: 'Property', value: 1, observedAt: '2024-01-01T00:00:00Z' }] }],
      ] as const) {
        const text = JSON.stringify(body);
        const { replies } = await rawExchange(port(),
          `POST ${NGSI}/${route} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
        t.equal(replies[0]?.status, 201, `${route} ${esc(id)}`);
        cleanHead(t, replies[0]!, `${route} ${esc(id)}`);
        const location = header(replies[0]!, 'location')!;
        t.ok(location.startsWith(`${NGSI}/${route}/`), location);
        // The Location names the entity: the path parameter decodes back to the id.
        const back = await rawExchange(port(), get(location));
        t.equal(back.replies[0]?.status, 200, `GET ${location}`);
        t.equal(JSON.parse(back.replies[0]!.body.toString()).id, body.id, 'the same entity');
      }
    }
    // A Link header naming the request's @context URL, which the client chose.
    for (const path of ['/ctx\u20ac.jsonld', '/a%3Eb/c"d>e.jsonld', `/${server}.jsonld`]) {
      const text = JSON.stringify({ type: 'Query', entities: [{ type: 'T' }], '@context': contextBase + path });
      const { replies } = await rawExchange(port(),
        `POST ${NGSI}/entityOperations/query HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nContent-Type: application/ld+json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
      t.equal(replies[0]?.status, 200, `query with @context ${esc(path)}`);
      cleanHead(t, replies[0]!, `Link for ${esc(path)}`);
      t.match(header(replies[0]!, 'link'), /^<http:\/\/127\.0\.0\.1:\d+\/[^<>"\s]+>; rel="http:\/\/www\.w3\.org\/ns\/json-ld#context"; type="application\/ld\+json"$/);
    }
  });
}
