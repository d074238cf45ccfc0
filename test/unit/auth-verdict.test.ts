// One map from an auth plugin's verdict to the refusal (src/pipeline/auth-verdict.ts) and one AuthRequest view
// (src/pipeline/auth-request.ts) for every hook (seed 000 §2.2, §2.4, §5.1).
import t from 'tap';
import { AuthVerdict } from '../../src/auth/contract.js';
import { refusalOf, type AuthHook } from '../../src/pipeline/auth-verdict.js';
import { refusalResult } from '../../src/pipeline/problem-result.js';
import { BrokerAuthRequest } from '../../src/pipeline/auth-request.js';
import { LdRequest } from '../../src/pipeline/ld-request.js';
import { LdOp } from '../../src/ngsild/operations.js';
import type { ResolvedContext } from '../../src/ngsild/context/resolved.js';

const NOT_A_VERDICT = 7 as AuthVerdict;

t.test('Allow lets the request in from every hook', async (t) => {
  for (const hook of ['authenticate', 'authorize', 'entity'] as AuthHook[]) t.equal(refusalOf(AuthVerdict.Allow, {}, hook), null, hook);
});

t.test('authenticate: 401 with WWW-Authenticate, 503, else 403', async (t) => {
  t.same(refusalOf(AuthVerdict.Unauthenticated, {}, 'authenticate'), {
    status: 401,
    title: 'Unauthorized',
    detail: 'authentication is required',
    wwwAuthenticate: 'Bearer',
  });
  t.same(refusalOf(AuthVerdict.Unauthenticated, { wwwAuthenticate: 'Bearer error="invalid_token"', detail: 'expired' }, 'authenticate'), {
    status: 401,
    title: 'Unauthorized',
    detail: 'expired',
    wwwAuthenticate: 'Bearer error="invalid_token"',
  });
  t.same(refusalOf(AuthVerdict.Unavailable, {}, 'authenticate'), {
    status: 503,
    title: 'Service Unavailable',
    detail: 'the authorization plugin cannot decide yet',
  });
  t.same(refusalOf(AuthVerdict.Deny, {}, 'authenticate'), { status: 403, title: 'Forbidden', detail: 'the request is not allowed' });
  t.same(refusalOf(NOT_A_VERDICT, {}, 'authenticate'), { status: 403, title: 'Forbidden', detail: 'the request is not allowed' });
});

t.test('authorize and entity: 403, 503; Unauthenticated or an unknown verdict is a denial naming the hook', async (t) => {
  for (const hook of ['authorize', 'entity'] as AuthHook[]) {
    t.same(
      refusalOf(AuthVerdict.Deny, {}, hook),
      { status: 403, title: 'Forbidden', detail: 'the request is not allowed' },
      `${hook} Deny`,
    );
    t.same(
      refusalOf(AuthVerdict.Deny, { title: 'No', detail: 'not yours' }, hook),
      { status: 403, title: 'No', detail: 'not yours' },
      `${hook} Deny, the plugin's words`,
    );
    t.same(
      refusalOf(AuthVerdict.Unavailable, {}, hook),
      { status: 503, title: 'Service Unavailable', detail: 'the authorization plugin cannot decide yet' },
      `${hook} Unavailable`,
    );
    t.same(
      refusalOf(AuthVerdict.Unauthenticated, {}, hook),
      { status: 403, title: 'Forbidden', detail: `the ${hook} hook refused the request` },
      `${hook} Unauthenticated`,
    );
    t.same(
      refusalOf(NOT_A_VERDICT, {}, hook),
      { status: 403, title: 'Forbidden', detail: `the ${hook} hook refused the request` },
      `${hook} unknown`,
    );
  }
});

t.test('a refusal is answered as about:blank ProblemDetails, WWW-Authenticate only on a 401', async (t) => {
  const unauth = refusalResult(refusalOf(AuthVerdict.Unauthenticated, {}, 'authenticate')!);
  t.equal(unauth.status, 401);
  t.same(unauth.headers, ['WWW-Authenticate', 'Bearer', 'Content-Type', 'application/json']);
  t.same(JSON.parse(new TextDecoder().decode(unauth.body!)), {
    type: 'about:blank',
    title: 'Unauthorized',
    status: 401,
    detail: 'authentication is required',
  });
  t.same(refusalResult(refusalOf(AuthVerdict.Deny, {}, 'authorize')!).headers, ['Content-Type', 'application/json']);
});

t.test("authenticate's view: the head only, no tenant, body nor @context", async (t) => {
  const head = {
    method: 'GET',
    path: '/ngsi-ld/v1/entities/urn:x:1',
    query: 'attrs=a%20b&attrs2=c',
    header: (n: string) => (n === 'x-y' ? 'z' : undefined),
  };
  const v = BrokerAuthRequest.ofHead(head, LdOp.RetrieveEntity, '/ngsi-ld/v1/entities/:entityId', (term) => `https://x/${term}`);
  t.same(
    [v.method, v.path, v.route, v.ldOp, v.ldOpName, v.entities],
    ['GET', head.path, '/ngsi-ld/v1/entities/:entityId', LdOp.RetrieveEntity, 'RetrieveEntity', true],
  );
  t.same(v.params, [
    ['attrs', 'a b'],
    ['attrs2', 'c'],
  ]);
  t.equal(v.tenant, null);
  t.equal(v.header('X-Y'), 'z', 'header names are case-insensitive');
  t.equal(v.body(), null);
  t.equal(v.expand('a'), null);
  t.equal(v.expandDefault('a'), 'https://x/a');
  const version = BrokerAuthRequest.ofHead(head, LdOp.Version, '/version', (x) => x);
  t.same([version.ldOp, version.ldOpName, version.entities], [0, '', false], '/version is LdOp 0');
  const none = BrokerAuthRequest.ofHead(head, LdOp.None, '', (x) => x);
  t.same([none.ldOp, none.ldOpName, none.entities], [0, '', false], 'no route: LdOp 0');
});

t.test("the pipeline's view: the request's tenant, body and @context once resolved", async (t) => {
  const body = new TextEncoder().encode('{"id":"urn:x:1"}').buffer as ArrayBuffer;
  const req = new LdRequest({
    op: LdOp.CreateEntity,
    route: '/ngsi-ld/v1/entities',
    method: 'POST',
    path: '/ngsi-ld/v1/entities',
    query: 'local=true',
    params: [],
    headers: { tenant: 'Acme', contentType: 'application/json' },
    body,
  });
  const v = BrokerAuthRequest.ofRequest(req, (term) => `https://x/${term}`);
  t.same(
    [v.method, v.path, v.route, v.ldOp, v.ldOpName, v.entities],
    ['POST', '/ngsi-ld/v1/entities', '/ngsi-ld/v1/entities', LdOp.CreateEntity, 'CreateEntity', true],
  );
  t.same(v.params, [['local', 'true']]);
  t.equal(v.tenant, 'acme');
  t.equal(v.header('Content-Type'), 'application/json');
  t.same(new TextDecoder().decode(v.body()!), '{"id":"urn:x:1"}');
  t.equal(v.expand('a'), null, 'before the @context step');
  req.context = { expandTerm: (term: string) => `https://ctx/${term}` } as ResolvedContext;
  t.equal(v.expand('a'), 'https://ctx/a', 'after it');
  const badTenant = new LdRequest({
    op: LdOp.QueryEntities,
    route: '/',
    method: 'GET',
    path: '/',
    query: '',
    params: [],
    headers: { tenant: 'no way' },
    body: null,
  });
  t.equal(
    BrokerAuthRequest.ofRequest(badTenant, (x) => x).tenant,
    null,
    'a tenant that is no name is null, refused later by the tenant step',
  );
});
