// The dsec entity hook with --dsecNgsild (seed 000 §5.2, §5.3, §5.8) through the plugin's contract: callable for any
// entity and identity without authorize having been asked (as a notification asks it for a subscription's owner),
// its partial answer, the per-request plan following the identity, and a role conflict as 503.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthVerdict, type AuthAnswer, type AuthDriver, type AuthEntity, type AuthRequest } from '../../src/auth/contract.js';
import { authShutdown, dsecInstances } from '../../src/plugins/auth/dsec/index.js';
import { ORG, register, request, waitFor } from '../fixtures/dsec/harness.js';

const DEFAULT = 'https://uri.etsi.org/ngsi-ld/default-context/';
const dir = mkdtempSync(join(tmpdir(), 'ldbroker-dsec-entity-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const refinement = (constraints: Record<string, unknown>[]): Record<string, unknown> => ({
  '@type': 'odrl:AssetCollection',
  'odrl:refinement': constraints.length === 1 ? constraints[0] : { 'odrl:and': constraints },
});
const rule = (left: string, op: string, right: unknown): Record<string, unknown> => ({
  'odrl:leftOperand': left,
  'odrl:operator': { '@id': op },
  'odrl:rightOperand': right,
});
const policy = (uid: string, assignee: unknown, action: string, constraints: Record<string, unknown>[]): Record<string, unknown> => ({
  '@type': 'odrl:Policy',
  'odrl:uid': uid,
  'odrl:permission': { 'odrl:action': { '@id': action }, 'odrl:assignee': assignee, 'odrl:target': refinement(constraints) },
});

const owner = { issuer: 'did:web:owner', type: ['VerifiableCredential'] };
const stranger = { issuer: 'did:web:stranger', type: ['VerifiableCredential'] };
const conflicted = {
  issuer: 'did:web:roles',
  credentialSubject: {
    roles: [
      { target: ORG, names: ['A'] },
      { target: ORG, names: ['B'] },
    ],
  },
};

/** Enough candidates for one identity that an entity is decided through the type index. */
const many = [
  ...Array.from({ length: 10 }, (_, i) =>
    policy(`urn:p:many-${i}`, 'did:web:many', 'odrl:read', [rule('ngsi-ld:entityType', 'odrl:eq', `T${i}`)]),
  ),
  policy('urn:p:many-or', 'did:web:many', 'odrl:read', [
    { 'odrl:or': [rule('ngsi-ld:entityType', 'odrl:eq', 'Z'), rule('ngsi-ld:entityType', 'odrl:eq', 'W')] },
  ]),
  policy('urn:p:many-list', 'did:web:many', 'odrl:read', [rule('ngsi-ld:entityType', 'odrl:isAnyOf', ['L1', 'L2'])]),
];

writeFileSync(
  join(dir, 'policies.json'),
  JSON.stringify([
    ...many,
    policy('urn:p:owner-building', 'did:web:owner', 'odrl:read', [rule('ngsi-ld:entityType', 'odrl:eq', 'Building')]),
    policy('urn:p:owner-car-name', 'did:web:owner', 'odrl:read', [
      rule('ngsi-ld:entityType', 'odrl:eq', 'Car'),
      rule('ngsi-ld:attribute', 'odrl:eq', 'name'),
    ]),
    policy('urn:p:roles', { '@type': 'odrl:PartyCollection', 'odrl:refinement': rule('vc:role', 'odrl:hasPart', 'A') }, 'odrl:read', [
      rule('ngsi-ld:entityType', 'odrl:eq', 'Building'),
    ]),
  ]),
);
writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [] }));

/** The view a notification gives: a retrieve in the subscription's tenant, no path of its own. */
function retrieveView(): AuthRequest {
  return { ...request({ method: 'GET', path: '' }), ldOp: 4, ldOpName: 'RetrieveEntity', tenant: '', entities: true };
}

function ask(driver: AuthDriver, req: AuthRequest, identity: unknown, entity: AuthEntity): { verdict: AuthVerdict; answer: AuthAnswer } {
  const answer: AuthAnswer = {};
  const verdict = driver.entity!(req, identity, entity, answer) as AuthVerdict;
  return { verdict, answer };
}

const { driver } = await register({
  dsecJwks: join(dir, 'jwks.json'),
  dsecIssuer: 'did:web:verifier',
  dsecPolicies: join(dir, 'policies.json'),
  dsecOrganization: ORG,
  dsecNgsild: true,
});
t.teardown(() => authShutdown());
t.ok(await waitFor(() => dsecInstances().at(-1)?.policies !== null), 'the policies are read');

const building: AuthEntity = { id: 'urn:x:1', types: [`${DEFAULT}Building`], storedTypes: true, read: true };
const car: AuthEntity = { id: 'urn:x:2', types: [`${DEFAULT}Car`], storedTypes: true, read: true };

t.test('without authorize, the hook decides any entity for any identity', async (t) => {
  const req = retrieveView();
  t.equal(ask(driver, req, owner, building).verdict, AuthVerdict.Allow, 'the owner reads a Building');
  t.equal(ask(driver, retrieveView(), stranger, building).verdict, AuthVerdict.Deny, 'no policy is the stranger’s');
  t.equal(ask(driver, retrieveView(), null, building).verdict, AuthVerdict.Deny, 'an unknown owner (null) reads nothing');
});

t.test('one view asked for two identities decides each on its own', async (t) => {
  const req = retrieveView();
  t.equal(ask(driver, req, owner, building).verdict, AuthVerdict.Allow);
  t.equal(ask(driver, req, stranger, building).verdict, AuthVerdict.Deny, 'the plan of the first identity is not reused');
  t.equal(ask(driver, req, owner, building).verdict, AuthVerdict.Allow);
});

t.test('a whole-entity read that only some attributes are allowed for is partial; each attribute is then asked', async (t) => {
  const req = retrieveView();
  const whole = ask(driver, req, owner, car);
  t.equal(whole.verdict, AuthVerdict.Allow);
  t.equal(whole.answer.partial, true);
  t.equal(ask(driver, req, owner, { ...car, attribute: `${DEFAULT}name` }).verdict, AuthVerdict.Allow);
  t.equal(ask(driver, req, owner, { ...car, attribute: `${DEFAULT}speed` }).verdict, AuthVerdict.Deny);
  t.equal(ask(driver, req, owner, building).answer.partial, undefined, 'a policy without attribute rules allows all');
});

t.test('an entity without types satisfies no type rule, not even a negative one', async (t) => {
  t.equal(ask(driver, retrieveView(), owner, { id: 'urn:x:3', types: [], storedTypes: false, read: true }).verdict, AuthVerdict.Deny);
});

t.test('a credential with two role lists for the organisation is 503 when a role policy is evaluated', async (t) => {
  const r = ask(driver, retrieveView(), conflicted, building);
  t.equal(r.verdict, AuthVerdict.Unavailable);
});

t.test('with many candidates an entity is decided through the type index, as by walking them', async (t) => {
  const who = { issuer: 'did:web:many' };
  const read = (types: string[]): AuthVerdict =>
    ask(driver, retrieveView(), who, { id: 'urn:x:m', types: types.map((n) => DEFAULT + n), storedTypes: true, read: true }).verdict;
  t.equal(read(['T7']), AuthVerdict.Allow, 'an eq policy of the type');
  t.equal(read(['X']), AuthVerdict.Deny, 'no policy of the type');
  t.equal(read(['X', 'T3']), AuthVerdict.Allow, 'one of two types');
  t.equal(read(['W']), AuthVerdict.Allow, 'a type rule under an or: no index key, still asked');
  t.equal(read(['L2']), AuthVerdict.Allow, 'an isAnyOf list gives each of its types a key');
  t.equal(read([]), AuthVerdict.Deny, 'no types');
});
