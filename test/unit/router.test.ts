// front/router.ts: every route of the operation catalog finds its operation with its decoded parameters, and a path
// the catalog does not hold (one segment more or less, another first segment) finds none.
import t from 'tap';
import { lookupRoute } from '../../src/front/router.js';
import { API_PREFIX, LdOp, OPERATIONS } from '../../src/ngsild/operations.js';

/** The pattern with each parameter named after itself, as a client would fill it. */
const filled = (pattern: string): string => pattern.replace(/:([A-Za-z]+)/g, (_, name: string) => `p-${name}`);

t.test('every catalog route finds its operation, HEAD the GET one, and its parameters in path order', async (t) => {
  let routes = 0;
  for (const operation of OPERATIONS)
    for (const r of operation.routes) {
      const path = (r.root === true ? '' : API_PREFIX) + filled(r.pattern);
      const found = lookupRoute(r.method, path);
      t.same(
        found,
        {
          kind: 'op',
          op: operation.op,
          route: (r.root === true ? '' : API_PREFIX) + r.pattern,
          params: [...r.pattern.matchAll(/:([A-Za-z]+)/g)].map((m) => `p-${m[1]}`),
        },
        `${r.method} ${path}`,
      );
      if (r.method === 'GET') t.equal(lookupRoute('HEAD', path).kind, 'op', `HEAD ${path}`);
      routes++;
    }
  t.ok(routes > 50, `${routes} routes`);
});

t.test('a path one segment longer or shorter, or under another first segment, is no route', async (t) => {
  t.same(lookupRoute('GET', `${API_PREFIX}/entities/urn:a:1/attrs/p/q/r/s`), { kind: 'notFound' });
  t.same(lookupRoute('GET', `${API_PREFIX}/nothing/urn:a:1`), { kind: 'notFound' });
  t.same(lookupRoute('GET', `${API_PREFIX}`), { kind: 'notFound' });
  t.same(lookupRoute('GET', '/entities/urn:a:1'), { kind: 'notFound' }, 'an API path without the prefix');
  t.same(lookupRoute('GET', `${API_PREFIX}/${'a/'.repeat(5000)}`), { kind: 'notFound' });
  t.same(lookupRoute('GET', `${API_PREFIX}/__proto__/x`), { kind: 'notFound' });
});

t.test('a parameter is percent-decoded; a trailing slash names the same resource; an empty one is named', async (t) => {
  t.same(lookupRoute('GET', `${API_PREFIX}/entities/urn%3Aa%3A1`), {
    kind: 'op',
    op: LdOp.RetrieveEntity,
    route: `${API_PREFIX}/entities/:entityId`,
    params: ['urn:a:1'],
  });
  t.equal(lookupRoute('GET', `${API_PREFIX}/entities/`).kind, 'op', 'the collection');
  t.same(lookupRoute('PUT', `${API_PREFIX}/entities/`).kind, 'badMethod');
  t.same(lookupRoute('PATCH', `${API_PREFIX}/entities//attrs/p`), { kind: 'emptyParam', name: 'entityId' });
  t.same(lookupRoute('OPTIONS', `${API_PREFIX}/entities`).kind, 'options');
});
