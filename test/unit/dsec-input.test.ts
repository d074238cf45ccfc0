// seed 000 §5.6: what a decision reads from the request: the body parsed lazily and at most once, the
// entity type's sources in their order, and nothing of the request kept after the decision.

import t from 'tap';
import { AuthVerdict, type AuthRequest } from '../../src/auth/contract.js';
import { DecisionInput } from '../../src/plugins/auth/dsec/odrl/input.js';
import { compilePolicySet, decide } from '../../src/plugins/auth/dsec/odrl/policy-set.js';

function counted(body: unknown, path = '/ngsi-ld/v1/entities'): { req: AuthRequest; calls: () => number } {
  let calls = 0;
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  return {
    calls: () => calls,
    req: {
      method: 'POST',
      path,
      params: [],
      ldOp: 0,
      ldOpName: '',
      route: '',
      tenant: '',
      entities: false,
      header: () => undefined,
      body: () => {
        calls++;
        return bytes;
      },
      expand: () => null,
      expandDefault: (term) => term,
    },
  };
}

function bodyPolicy(uid: string, path: string, value: unknown) {
  return {
    'odrl:uid': uid,
    'odrl:permission': {
      'odrl:action': 'ngsild:create',
      'odrl:assignee': 'vc:any',
      'odrl:target': {
        '@type': 'odrl:AssetCollection',
        'odrl:refinement': { 'odrl:leftOperand': 'ngsi-ld:entityType', 'odrl:operator': 'odrl:eq', 'odrl:rightOperand': 'Car' },
      },
      'odrl:constraint': [{ 'http:bodyValue': path, 'odrl:operator': 'odrl:eq', 'odrl:rightOperand': value }],
    },
  };
}

t.test('the body is read once per decision however many policies read it', async (t) => {
  const set = compilePolicySet([[bodyPolicy('a', '$.x', 1), bodyPolicy('b', '$.x', 2), bodyPolicy('c', '$.x', 3)]], { ngsild: false });
  const { req, calls } = counted({ type: 'Car', x: 3 });
  const d = decide(set, new DecisionInput().reset(req, null, false, 0), { verdict: AuthVerdict.Deny, reason: '' });
  t.equal(d.verdict, AuthVerdict.Allow);
  t.equal(d.reason, 'c');
  t.equal(calls(), 1);
});

t.test('the body is not read when no rule needs it', async (t) => {
  const set = compilePolicySet([bodyPolicy('a', '$.x', 1)], { ngsild: false });
  const { req, calls } = counted({ type: 'Car', x: 1 }, '/ngsi-ld/v1/entities/urn:ngsi-ld:Bus:1');
  const d = decide(set, new DecisionInput().reset(req, null, false, 0), { verdict: AuthVerdict.Deny, reason: '' });
  t.equal(d.verdict, AuthVerdict.Deny, 'the type from the id fails before the body is needed');
  t.equal(calls(), 0);
});

t.test('a decision input keeps nothing of the request once cleared', async (t) => {
  const x = new DecisionInput();
  const { req } = counted({ type: 'Car' });
  x.reset(req, { issuer: 'me' }, false, 0);
  t.equal(x.entityType(), 'Car');
  x.clear();
  t.equal(x.credential, undefined);
  t.equal(x.path, '');
  t.equal(x.body(), undefined);
});
