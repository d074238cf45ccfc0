// --dsecNgsild plans a request once (entity-decision.ts planOf): policies whose request rules are the same rules share
// a requestKey and are evaluated once for all of them. The plan must be the one each policy evaluated alone gives.

import t from 'tap';
import type { AuthRequest } from '../../src/auth/contract.js';
import { DecisionInput } from '../../src/plugins/auth/dsec/odrl/input.js';
import { REQUEST_RULES, type CompiledPolicy } from '../../src/plugins/auth/dsec/odrl/compile.js';
import { compilePolicySet, type PolicySet } from '../../src/plugins/auth/dsec/odrl/policy-set.js';
import { planOf } from '../../src/plugins/auth/dsec/entity-decision.js';

const NOW = Date.parse('2024-05-15T10:30:00Z');
const ODRL = { odrl: 'http://www.w3.org/ns/odrl/2/' };

const constraint = (left: string, op: string, right: unknown): Record<string, unknown> => ({
  '@type': 'odrl:Constraint',
  'odrl:leftOperand': left,
  'odrl:operator': { '@id': op },
  'odrl:rightOperand': right,
});

/** A policy: action, assignee, a target refined by `target` constraints, and request constraints beside it. */
function policy(uid: string, action: string, assignee: string, target: Record<string, unknown>[], extra: Record<string, unknown>[] = []) {
  return {
    '@context': ODRL,
    '@type': 'odrl:Policy',
    'odrl:uid': uid,
    'odrl:permission': {
      '@type': 'odrl:Permission',
      'odrl:action': { '@id': action },
      'odrl:assignee': assignee,
      'odrl:target': {
        '@type': 'odrl:AssetCollection',
        'odrl:source': 'urn:asset',
        'odrl:refinement': target.length === 1 ? target[0] : { 'odrl:and': target },
      },
      ...(extra.length > 0 ? { 'odrl:constraint': extra.length === 1 ? extra[0] : { 'odrl:and': extra } } : {}),
    },
  };
}

const type = (name: string): Record<string, unknown> => constraint('ngsi-ld:entityType', 'odrl:eq', name);
const inPath = (p: string): Record<string, unknown> => constraint('http:path', 'http:isInPath', p);

function request(method: string, path: string, ldOpName: string): AuthRequest {
  return {
    method,
    path,
    params: [],
    ldOp: 0,
    ldOpName,
    route: '',
    tenant: '',
    entities: true,
    header: () => undefined,
    body: () => null,
    expand: () => null,
    expandDefault: (term) => term,
  };
}

function compiled(docs: unknown[]): PolicySet {
  return compilePolicySet([docs], { ngsild: true, expandDefault: (term) => `https://uri.example/${term}` });
}

/** Each policy of each method evaluated on its own, as before the shared evaluation. */
function alone(set: PolicySet, req: AuthRequest, identity: unknown, methods: readonly string[]): string[][] {
  const x = new DecisionInput().reset(req, identity, false, NOW);
  return methods.map((m) => {
    x.method = m;
    const list: string[] = [];
    for (const p of set.byMethod.get(m) ?? []) {
      if (p.holdsKinds(x, REQUEST_RULES)) list.push(p.uid);
      if (list.length > 0 && (set.policies.find((q) => q.uid === list[list.length - 1]) as CompiledPolicy).entityFree) break;
    }
    return list;
  });
}

const key = (set: PolicySet, uid: string): string => (set.policies.find((p) => p.uid === uid) as CompiledPolicy).requestKey;

t.test('policies differing only in the entity they need share the request key; any request rule apart, they do not', async (t) => {
  const set = compiled([
    policy('urn:p:car', 'odrl:read', 'did:web:alice', [type('Car')]),
    policy('urn:p:bus', 'odrl:read', 'did:web:alice', [type('Bus')]),
    policy('urn:p:bob', 'odrl:read', 'did:web:bob', [type('Car')]),
    policy('urn:p:use', 'odrl:use', 'did:web:alice', [type('Car')]),
    policy('urn:p:path', 'odrl:read', 'did:web:alice', [type('Car')], [inPath('/ngsi-ld/v1/entities')]),
    policy('urn:p:path2', 'odrl:read', 'did:web:alice', [type('Bus')], [inPath('/ngsi-ld/v1/entities')]),
    policy('urn:p:other-path', 'odrl:read', 'did:web:alice', [type('Bus')], [inPath('/ngsi-ld/v1/types')]),
  ]);
  t.equal(set.policies.length, 7, 'every policy compiled');
  t.equal(key(set, 'urn:p:car'), key(set, 'urn:p:bus'), 'same action and assignee, another type');
  t.not(key(set, 'urn:p:car'), key(set, 'urn:p:bob'), 'another assignee');
  t.not(key(set, 'urn:p:car'), key(set, 'urn:p:use'), 'another action');
  t.not(key(set, 'urn:p:car'), key(set, 'urn:p:path'), 'a request constraint more');
  t.equal(key(set, 'urn:p:path'), key(set, 'urn:p:path2'), 'the same request constraint, another type');
  t.not(key(set, 'urn:p:path'), key(set, 'urn:p:other-path'), 'another path');
});

t.test('the plan is what each policy evaluated alone gives, for every identity, method and path', async (t) => {
  const docs: unknown[] = [];
  for (let i = 0; i < 30; i++) {
    const who = ['did:web:alice', 'did:web:bob', 'did:web:carol'][i % 3] as string;
    const action = ['odrl:read', 'odrl:use', 'odrl:modify'][i % 4 === 3 ? 2 : i % 2] as string;
    const extra = i % 5 === 0 ? [inPath(i % 2 === 0 ? '/ngsi-ld/v1/entities' : '/ngsi-ld/v1/types')] : [];
    docs.push(policy(`urn:p:${i}`, action, who, [type(`T${i % 7}`)], extra));
  }
  docs.push(policy('urn:p:any', 'odrl:read', 'did:web:dave', [inPath('/ngsi-ld')]));
  const set = compiled(docs);
  t.equal(set.policies.length, 31);
  const cases: [string, string, string][] = [
    ['GET', '/ngsi-ld/v1/entities', 'QueryEntities'],
    ['GET', '/ngsi-ld/v1/entities/urn:x:1', 'RetrieveEntity'],
    ['POST', '/ngsi-ld/v1/entityOperations/upsert', 'BatchUpsert'],
    ['PATCH', '/ngsi-ld/v1/entities/urn:x:1/attrs', 'UpdateAttrs'],
    ['DELETE', '/ngsi-ld/v1/entities/urn:x:1', 'DeleteEntity'],
  ];
  let planned = 0;
  for (const who of ['alice', 'bob', 'carol', 'dave', 'eve']) {
    const identity = { issuer: `did:web:${who}`, credentialSubject: {} };
    for (const [method, path, op] of cases) {
      const req = request(method, path, op);
      const plan = planOf(set, req, identity, new DecisionInput().reset(req, identity, false, NOW));
      t.same(
        plan.candidates.map((list) => list.map((p) => p.uid)),
        alone(set, req, identity, plan.methods),
        `${who} ${method} ${path}`,
      );
      planned += plan.candidates.reduce((n, list) => n + list.length, 0);
    }
  }
  t.ok(planned > 20, `the requests had candidates to plan (${planned})`);
});
