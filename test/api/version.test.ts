// GET /version and GET /ngsi-ld/v1/version (issue 15 item 3): the broker's name and version, the NGSI-LD version it
// implements, Node, the HTTP server and the uWS, lmdb-js and LMDB versions; HEAD and OPTIONS as on every GET route.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { startBroker, call, NGSI, type Broker } from './helpers/broker.js';
import { ROOT_URL } from '../helpers/repo.js';

const root = ROOT_URL;
const versionOf = (path: string): string => (JSON.parse(readFileSync(new URL(path, root), 'utf8')) as { version: string }).version;

let broker: Broker;
t.before(async () => {
  broker = await startBroker([], {}, { http: true });
});
t.teardown(async () => {
  await broker.stop();
});

for (const path of ['/version', `${NGSI}/version`]) {
  t.test(`GET ${path} names the broker, the spec version, Node, the server and the storage libraries`, async (t) => {
    const r = await call(broker, 'GET', path);
    t.equal(r.status, 200, r.text);
    t.match(r.headers.get('content-type'), 'application/json');
    t.same(r.json, {
      name: 'ldbroker',
      version: versionOf('package.json'),
      ngsiLdSpec: '1.8.1',
      node: process.versions.node,
      httpServer: 'uws',
      uws: versionOf('node_modules/@trufflesuite/uws-js-unofficial/package.json'),
      lmdbJs: versionOf('node_modules/lmdb/package.json'),
      lmdb: r.json.lmdb,
    });
    t.match(r.json.lmdb, /^\d+\.\d+\.\d+$/, 'the LMDB C library version from lmdb-js');
  });
}

t.test('HEAD and OPTIONS answer on /version as on every GET route; other methods are 405', async (t) => {
  const head = await call(broker, 'HEAD', '/version');
  t.equal(head.status, 200);
  t.equal(head.text, '');
  t.ok(Number(head.headers.get('content-length')) > 0, 'the length of the body not sent');
  const options = await call(broker, 'OPTIONS', '/version');
  t.equal(options.status, 204);
  t.equal(options.headers.get('allow'), 'GET, HEAD, OPTIONS');
  const post = await call(broker, 'POST', '/version', { body: {} });
  t.equal(post.status, 405);
  t.equal(post.headers.get('allow'), 'GET, HEAD, OPTIONS');
});

t.test('/version takes no parameter, and nothing else outside /ngsi-ld/v1 is served', async (t) => {
  const bad = await call(broker, 'GET', '/version?verbose=true');
  t.equal(bad.status, 400);
  t.equal(bad.json.type, 'https://uri.etsi.org/ngsi-ld/errors/InvalidRequest', 'CIM 009 §6.3.20: a parameter the operation does not take');
  t.match(bad.json.detail, /verbose/);
  for (const path of ['/versions', '/version/x', '/', '/ngsi-ld/v1', '/ngsi-ld/version', `${NGSI}/version/x`]) {
    t.equal((await call(broker, 'GET', path)).status, 404, path);
  }
});

t.test('with --httpServer node, /version says node', async (t) => {
  const node = await startBroker(['--httpServer', 'node']);
  t.teardown(() => node.stop());
  const r = await call(node, 'GET', '/version');
  t.equal(r.status, 200);
  t.equal(r.json.httpServer, 'node');
});
