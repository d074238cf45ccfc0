// The decision over the method index and the policy guards (policy-set.ts) is the decision of seed 000 §5.7 taken
// policy by policy in the PAP's order: same verdict and same deciding policy (rule 2), same 503 (rule 5).

import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { AuthVerdict, type AuthRequest } from '../../src/auth/contract.js';
import { DecisionInput } from '../../src/plugins/auth/dsec/odrl/input.js';
import { RoleConflict } from '../../src/plugins/auth/dsec/odrl/left-operands.js';
import { compilePolicySet, decide, type Decision, type PolicySet } from '../../src/plugins/auth/dsec/odrl/policy-set.js';
import { repoPath } from '../helpers/repo.js';

const ORG = 'did:web:provider.example';
const NOW = Date.parse('2024-05-15T10:30:00Z');

/** seed 000 §5.7 read literally: every policy in order, every rule in order. */
function decideInOrder(set: PolicySet, x: DecisionInput): { verdict: AuthVerdict; reason: string } {
  for (const p of set.policies) {
    try {
      if (p.allows(x)) return { verdict: AuthVerdict.Allow, reason: p.uid };
    } catch (e) {
      if (!(e instanceof RoleConflict)) throw e;
      return { verdict: AuthVerdict.Unavailable, reason: `policy '${p.uid}': ${e.message}` };
    }
  }
  return { verdict: AuthVerdict.Deny, reason: set.policies.length === 0 ? 'no policy is defined' : 'no policy allows the request' };
}

interface Req {
  method: string;
  path: string;
  params?: [string, string][];
  headers?: Record<string, string>;
  body?: unknown;
  bodyText?: string;
}

function authRequest(r: Req): AuthRequest {
  const headers = new Map(Object.entries(r.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const text = r.bodyText ?? (r.body === undefined ? null : JSON.stringify(r.body));
  const bytes = text === null ? null : new TextEncoder().encode(text);
  return {
    method: r.method,
    path: r.path,
    params: r.params ?? [],
    ldOp: 0,
    ldOpName: '',
    route: '',
    tenant: '',
    entities: false,
    header: (name) => headers.get(name.toLowerCase()),
    body: () => bytes,
    expand: () => null,
    expandDefault: (term) => term,
  };
}

/** Both decisions, each on a fresh input so nothing one computed helps the other. */
function both(set: PolicySet, r: Req, credential: unknown, strippedPath = false, now = NOW) {
  const indexed = decide(set, new DecisionInput().reset(authRequest(r), credential, strippedPath, now), {
    verdict: AuthVerdict.Deny,
    reason: '',
  } as Decision);
  const inOrder = decideInOrder(set, new DecisionInput().reset(authRequest(r), credential, strippedPath, now));
  return { indexed: { verdict: indexed.verdict, reason: indexed.reason }, inOrder };
}

t.test('every case of the decision table is decided as policy by policy in order', async (t) => {
  const dir = repoPath('test/fixtures/dsec/decision-table/');
  let cases = 0;
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const fixture = JSON.parse(readFileSync(dir + file, 'utf8'));
    for (const c of fixture.cases) {
      const organization = c.organization === undefined ? fixture.organization : (c.organization ?? undefined);
      const set = compilePolicySet(
        c.policies.map((n: string) => fixture.policies[n]),
        { organization, ngsild: false },
      );
      const credential = c.credential === null ? null : fixture.credentials[c.credential];
      const now = Date.parse(c.now ?? fixture.now ?? '2024-05-15T10:30:00Z');
      const { indexed, inOrder } = both(set, c.request, credential, c.strippedPath === true, now);
      t.same(indexed, inOrder, `${file}: ${c.name}`);
      cases++;
    }
  }
  t.ok(cases >= 159, `${cases} cases`);
});

// Policies built from parts, to combine guards, role reads and actions in every order.
const action = (a: string) => ({ 'odrl:action': { '@id': a } });
const ANY = { '@id': 'vc:any' };
const roleIs = (name: string, word = 'vc:role') => ({
  '@type': 'odrl:PartyCollection',
  'odrl:refinement': { 'odrl:leftOperand': word, 'odrl:operator': 'odrl:hasPart', 'odrl:rightOperand': name },
});
const typeIs = (type: unknown, op = 'odrl:eq') => ({
  '@type': 'odrl:AssetCollection',
  'odrl:refinement': { 'odrl:leftOperand': 'ngsi-ld:entityType', 'odrl:operator': op, 'odrl:rightOperand': type },
});
const asset = (uid: string) => ({ '@type': 'odrl:Asset', 'odrl:uid': uid });
const inPath = (p: string) => ({
  '@type': 'odrl:AssetCollection',
  'odrl:refinement': { 'odrl:leftOperand': 'http:path', 'odrl:operator': 'http:isInPath', 'odrl:rightOperand': p },
});
const roleConstraint = (name: string, word = 'vc:role') => ({
  'odrl:constraint': { 'odrl:leftOperand': word, 'odrl:operator': 'odrl:hasPart', 'odrl:rightOperand': name },
});

function policy(uid: string, ...permissions: Record<string, unknown>[]) {
  return { 'odrl:uid': uid, 'odrl:permission': permissions.length === 1 ? permissions[0] : permissions };
}
const permission = (a: string, assignee: unknown, target: unknown, extra: Record<string, unknown> = {}) => ({
  ...action(a),
  'odrl:assignee': assignee,
  'odrl:target': target,
  ...extra,
});

const CONFLICT = {
  issuer: 'did:web:issuer.example',
  credentialSubject: {
    roles: [
      { target: ORG, names: ['OPERATOR'] },
      { target: ORG, names: ['ADMIN'] },
    ],
    rolesAndDuties: [
      { target: ORG, roleNames: ['seller'] },
      { target: ORG, roleNames: ['buyer'] },
    ],
  },
};
const OPERATOR = { issuer: 'did:web:issuer.example', credentialSubject: { roles: [{ target: ORG, names: ['OPERATOR'] }] } };
const CAR = { method: 'GET', path: '/ngsi-ld/v1/entities/urn:ngsi-ld:Car:1' };

t.test('rule 5: a role read before a failing type guard still answers 503', async (t) => {
  const set = compilePolicySet(
    [
      [
        policy('urn:p:role-then-type', permission('odrl:read', roleIs('OPERATOR'), typeIs('Bus'))),
        policy('urn:p:any', permission('odrl:read', ANY, inPath('/ngsi-ld'))),
      ],
    ],
    { organization: ORG, ngsild: false },
  );
  t.not(set.policies[0]?.guard, null, 'the type rule is a guard');
  const { indexed, inOrder } = both(set, CAR, CONFLICT);
  t.equal(indexed.verdict, AuthVerdict.Unavailable);
  t.same(indexed, inOrder);
  t.same(both(set, CAR, OPERATOR).indexed, { verdict: AuthVerdict.Allow, reason: 'urn:p:any' }, 'without a conflict the guard skips it');
});

t.test('rule 5: a failing type guard before the role read ends the policy without reading the role', async (t) => {
  const set = compilePolicySet(
    [
      [
        policy('urn:p:type-then-role', permission('odrl:read', ANY, typeIs('Bus'), roleConstraint('OPERATOR'))),
        policy('urn:p:any', permission('odrl:read', ANY, inPath('/ngsi-ld'))),
      ],
    ],
    { organization: ORG, ngsild: false },
  );
  const { indexed, inOrder } = both(set, CAR, CONFLICT);
  t.same(indexed, { verdict: AuthVerdict.Allow, reason: 'urn:p:any' });
  t.same(indexed, inOrder);
});

t.test('rule 2: the first allowing policy decides, whichever way it is found', async (t) => {
  const set = compilePolicySet(
    [
      [
        policy('urn:p:create', permission('ngsild:create', ANY, typeIs('Car'))),
        policy('urn:p:bus', permission('odrl:read', ANY, typeIs('Bus'))),
        policy('urn:p:car-or-bus', permission('odrl:read', ANY, typeIs(['Bus', 'Car'], 'odrl:isAnyOf'))),
        policy('urn:p:car', permission('odrl:read', ANY, typeIs('Car'))),
      ],
    ],
    { organization: ORG, ngsild: false },
  );
  t.same(both(set, CAR, OPERATOR).indexed, { verdict: AuthVerdict.Allow, reason: 'urn:p:car-or-bus' });
  t.same(both(set, { method: 'HEAD', path: CAR.path }, OPERATOR).indexed, {
    verdict: AuthVerdict.Deny,
    reason: 'no policy allows the request',
  });
});

t.test('a policy of several permissions is indexed by its first action only', async (t) => {
  const set = compilePolicySet(
    [
      [
        policy('urn:p:two', permission('odrl:delete', ANY, inPath('/ngsi-ld')), permission('odrl:read', ANY, inPath('/ngsi-ld'))),
        policy(
          'urn:p:read-then-role',
          permission('odrl:read', ANY, typeIs('Bus')),
          permission('odrl:delete', roleIs('OPERATOR'), inPath('/ngsi-ld')),
        ),
        policy('urn:p:any', permission('odrl:use', ANY, inPath('/ngsi-ld'))),
      ],
    ],
    { organization: ORG, ngsild: false },
  );
  for (const method of ['GET', 'DELETE', 'PATCH', 'get']) {
    for (const credential of [OPERATOR, CONFLICT, null]) {
      const { indexed, inOrder } = both(set, { method, path: CAR.path }, credential);
      t.same(indexed, inOrder, `${method} ${credential === null ? 'anonymous' : credential === CONFLICT ? 'conflict' : 'operator'}`);
    }
  }
});

/** A small deterministic generator (mulberry32) so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let r = Math.imul(a ^ (a >>> 15), 1 | a);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

t.test('random policy sets, requests and credentials: the same decision as in order', async (t) => {
  const rnd = random(6);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const ACTIONS = ['odrl:read', 'odrl:modify', 'odrl:delete', 'ngsild:create', 'odrl:use', 'dspace:x'];
  const TYPES = ['Car', 'Bus', 'Tram'];
  const assignees = () =>
    pick<unknown>([ANY, roleIs(pick(['OPERATOR', 'ADMIN'])), roleIs(pick(['seller', 'buyer']), 'dome-op:role'), 'did:web:issuer.example']);
  const targets = () =>
    pick<unknown>([
      typeIs(pick(TYPES)),
      typeIs([pick(TYPES), pick(TYPES)], 'odrl:isAnyOf'),
      typeIs(pick(TYPES), 'odrl:neq'),
      asset(pick(['urn:ngsi-ld:Car:1', 'urn:ngsi-ld:Bus:2', 'entities'])),
      inPath('/ngsi-ld'),
      typeIs(pick(TYPES), 'odrl:isAllOf'),
    ]);
  const extras = () =>
    pick<Record<string, unknown>>([{}, {}, roleConstraint(pick(['OPERATOR', 'ADMIN'])), roleConstraint('seller', 'dome-op:role')]);
  const requests: Req[] = [
    CAR,
    { method: 'GET', path: '/ngsi-ld/v1/entities/urn:ngsi-ld:Bus:2' },
    { method: 'GET', path: '/ngsi-ld/v1/entities', params: [['type', 'Tram']] },
    { method: 'POST', path: '/ngsi-ld/v1/entities', body: { id: 'urn:ngsi-ld:Car:9', type: 'Car' } },
    { method: 'POST', path: '/ngsi-ld/v1/entities', body: { id: 'urn:x', type: { not: 'a string' } } },
    { method: 'PATCH', path: '/ngsi-ld/v1/entities/urn:ngsi-ld:Tram:3/attrs' },
    { method: 'DELETE', path: '/ngsi-ld/v1/entities/urn:ngsi-ld:Bus:2' },
    { method: 'PUT', path: '/ngsi-ld/v1/entities/urn:ngsi-ld:Car:1/attrs/speed' },
    { method: 'OPTIONS', path: '/ngsi-ld/v1/entities' },
  ];
  const credentials = [
    OPERATOR,
    CONFLICT,
    null,
    { issuer: 'did:web:issuer.example', credentialSubject: { rolesAndDuties: [{ target: ORG, roleNames: ['seller'] }] } },
  ];
  let differences = 0;
  for (let s = 0; s < 400; s++) {
    const docs = Array.from({ length: 1 + Math.floor(rnd() * 8) }, (_, i) => {
      const perms = Array.from({ length: rnd() < 0.8 ? 1 : 2 }, () => permission(pick(ACTIONS), assignees(), targets(), extras()));
      return policy(`urn:p:${i}`, ...perms);
    });
    const set = compilePolicySet([docs], { organization: ORG, ngsild: false });
    for (const r of requests) {
      for (const c of credentials) {
        const { indexed, inOrder } = both(set, r, c);
        if (indexed.verdict !== inOrder.verdict || indexed.reason !== inOrder.reason) {
          differences++;
          if (differences <= 3) t.same(indexed, inOrder, `set ${s}, ${r.method} ${r.path}: ${JSON.stringify(docs)}`);
        }
      }
    }
  }
  t.equal(differences, 0, 'no decision differs');
});
