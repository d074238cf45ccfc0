// The NGSILD-Tenant value (CIM 009 v1.8 §4.14): one parser (src/ngsild/tenant.ts), and a request parses it once
// however often the auth view and the tenant step ask.
import t from 'tap';
import { isTenantName, parseTenant } from '../../src/ngsild/tenant.js';
import { LdError } from '../../src/ngsild/problem.js';
import { LdRequest } from '../../src/pipeline/ld-request.js';
import { LdOp } from '../../src/ngsild/operations.js';

t.test('an absent or empty header is the default tenant', async (t) => {
  t.equal(parseTenant(undefined), '');
  t.equal(parseTenant(''), '');
});

t.test('a tenant name is kept lower-case', async (t) => {
  t.equal(parseTenant('Acme_1-b'), 'acme_1-b');
  t.equal(parseTenant('x'.repeat(50)), 'x'.repeat(50), '50 characters');
});

t.test('a value that is no tenant name is 400 BadRequestData', async (t) => {
  for (const bad of ['a b', 'a/b', 'a.b', 'é', 'x'.repeat(51), '../x', 'a\u0000']) {
    t.throws(() => parseTenant(bad), { kind: 'BadRequestData', status: 400 }, JSON.stringify(bad));
  }
});

t.test('isTenantName accepts what parseTenant gives, and no upper case nor the default tenant', async (t) => {
  t.ok(isTenantName('acme'));
  t.notOk(isTenantName('Acme'), 'names are compared lower-case');
  t.notOk(isTenantName(''), 'the default tenant is no name');
  t.notOk(isTenantName('a~b'));
});

function request(tenant: string | undefined): LdRequest {
  return new LdRequest({
    op: LdOp.RetrieveEntity,
    route: '/',
    method: 'GET',
    path: '/',
    query: '',
    params: [],
    headers: { tenant },
    body: null,
  });
}

t.test('a request parses its tenant once: the same answer, or the same refusal, each time it is asked', async (t) => {
  const req = request('Acme');
  t.equal(req.namedTenant(), 'acme');
  t.equal(req.namedTenant(), 'acme');
  const bad = request('no way');
  let first: unknown;
  try {
    bad.namedTenant();
  } catch (e) {
    first = e;
  }
  t.ok(first instanceof LdError, 'refused');
  let second: unknown;
  try {
    bad.namedTenant();
  } catch (e) {
    second = e;
  }
  t.equal(second, first, 'the same refusal, not a second parse');
});
