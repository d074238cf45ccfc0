// `--auth dsec --dsecNgsild` end to end (seed 000 §5.2, §5.8): real JWTs signed with keys made here, a real verifier
// (discovery and JWKS over HTTP), policies written through the broker's own policy API and read back by the plugin.
// The decision table is data: test/fixtures/dsec/ngsild/table.json (policies, the entities set up, the cases in order).
import t from 'tap';
import { readFileSync } from 'node:fs';
import { FakeVerifier, ORG, makeKey, signToken } from '../fixtures/dsec/harness.js';
import { startBroker, call, NGSI, type Broker, type Reply } from './helpers/broker.js';
import { constraint, policy } from '../../bench/odrl-policy.js';
import { freePort } from './helpers/ports.js';
import { repoPath } from '../helpers/repo.js';

interface PolicySpec {
  uid: string;
  /** The persona (credential issuer did:web:<as>) it is for; `*roles`: anyone with the role `roles`. */
  as: string;
  action: string;
  roles?: string;
  constraints: { left: string; op: string; right: unknown }[];
}

interface Then {
  as: string;
  path: string;
  status: number;
  valueOf?: Record<string, unknown>;
}

interface Case {
  name: string;
  as: string;
  method: string;
  path: string;
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Members the answer (or each entity of a list) has, and lacks. */
  has?: string[];
  lacks?: string[];
  /** The ids of the entities answered, in any order. */
  ids?: string[];
  count?: string;
  /** Text the Link header holds. */
  linkHas?: string;
  batchOk?: string[];
  batchDenied?: string[];
  then?: Then;
}

interface Table {
  description: string;
  policies: PolicySpec[];
  setup: [string, string, unknown, Record<string, string>?][];
  cases: Case[];
}

const table = JSON.parse(readFileSync(repoPath('test/fixtures/dsec/ngsild/table.json'), 'utf8')) as Table;

const constraintOf = (c: { left: string; op: string; right: unknown }): Record<string, unknown> => constraint(c.left, c.op, c.right);

/** The ODRL policy of a spec: its action, its assignee, its target refined by the constraints (an `and`). */
export function odrlPolicy(p: PolicySpec): Record<string, unknown> {
  const assignee =
    p.roles !== undefined
      ? {
          '@type': 'odrl:PartyCollection',
          'odrl:source': 'urn:user',
          'odrl:refinement': constraint('vc:role', 'odrl:hasPart', p.roles),
        }
      : `did:web:${p.as}`;
  return policy(p.uid, p.action, assignee, p.constraints.map(constraintOf));
}

const key = await makeKey('k-ngsild', 'ES256');

/** The credential of a persona: issuer did:web:<persona>; a few personas differ (roles, size). */
function credential(persona: string): Record<string, unknown> {
  const base = { type: ['VerifiableCredential'], issuer: `did:web:${persona}`, credentialSubject: { type: 'gx:LegalParticipant' } };
  switch (persona) {
    case 'noroles':
      return base;
    case 'withroles':
      return { ...base, credentialSubject: { roles: [{ target: ORG, names: ['OPERATOR'] }] } };
    case 'hugereader':
      return { ...base, issuer: 'did:web:reader', credentialSubject: { type: 'gx:LegalParticipant', note: 'x'.repeat(8 * 1024) } };
    case 'toohuge':
      return { ...base, issuer: 'did:web:reader', credentialSubject: { note: 'x'.repeat(20 * 1024) } };
    default:
      return base;
  }
}

const tokens = new Map<string, string>();
async function tokenOf(persona: string): Promise<string> {
  let tk = tokens.get(persona);
  if (tk === undefined) tokens.set(persona, (tk = await signToken(key, { verifiableCredential: credential(persona) })));
  return tk;
}

async function send(
  b: Broker,
  persona: string,
  method: string,
  path: string,
  body?: unknown,
  extra: Record<string, string> = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...extra };
  if (persona !== '-') headers.authorization = `Bearer ${await tokenOf(persona)}`;
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && '@context' in body)
    headers['content-type'] = 'application/ld+json';
  return call(b, method, path, { body: body ?? undefined, headers });
}

const verifier = await new FakeVerifier().start();
verifier.keys = [key.publicJwk];
t.teardown(() => verifier.served.close());

/** A broker with --policyApiPort, reading its policies from there; resolves once `ready` holds. */
async function brokerWith(extra: string[], policies: Record<string, unknown>[], ready: (b: Broker) => Promise<boolean>): Promise<Broker> {
  const papPort = await freePort();
  const b = await startBroker(
    [
      '--troe',
      'embdb',
      '--policyApiPort',
      String(papPort),
      '--auth',
      'dsec',
      '--dsecDiscovery',
      verifier.discovery,
      '--dsecPap',
      `http://127.0.0.1:${papPort}`,
      '--dsecOrganization',
      ORG,
      '--dsecRefresh',
      '1',
      ...extra,
    ],
    {},
    { http: true },
  );
  for (const p of policies) {
    const r = await call(`http://127.0.0.1:${papPort}`, 'POST', '/policy', { body: p });
    if (r.status !== 200) throw new Error(`policy ${String(p['odrl:uid'])}: ${r.status} ${r.text}`);
  }
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && !(await ready(b))) await new Promise((res) => setTimeout(res, 100));
  return b;
}

function entityIds(json: unknown): string[] {
  return Array.isArray(json) ? json.map((e: { id: string }) => e.id) : [];
}

t.test('--dsecNgsild: the decision table of seed 000 §5.8', async (t) => {
  t.ok(table.cases.length >= 80, `${table.cases.length} cases`);
  // The admin's policies are posted last: the plugin reads the whole list at each refresh, so once the admin is
  // allowed every other policy is loaded too (posted first, a refresh between two posts let cases run on a part).
  const adminLast = [...table.policies.filter((p) => p.as !== 'admin'), ...table.policies.filter((p) => p.as === 'admin')];
  const broker = await brokerWith(['--dsecNgsild'], adminLast.map(odrlPolicy), async (b) => {
    const r = await send(b, 'admin', 'GET', `${NGSI}/entities?type=Nothing`);
    return r.status === 200;
  });
  t.teardown(() => broker.stop());
  for (const [method, path, body, headers] of table.setup) {
    const r = await send(broker, 'admin', method, path, body, headers);
    t.ok(r.status < 300, `setup ${method} ${path}: ${r.status} ${r.text}`);
  }
  for (const c of table.cases) {
    const r = await send(broker, c.as, c.method, c.path, c.body, c.headers);
    const label = `${c.name} [${c.as} ${c.method} ${c.path.slice(0, 90)}]`;
    t.equal(r.status, c.status, `${label}: ${r.text.slice(0, 300)}`);
    if (r.status >= 400) t.equal(r.json?.type === 'about:blank' || typeof r.json?.type === 'string', true, `${label}: a ProblemDetails`);
    if (c.ids !== undefined) t.same(entityIds(r.json).sort(), [...c.ids].sort(), `${label}: the entities answered`);
    const entities = Array.isArray(r.json) ? r.json : [r.json];
    for (const e of c.has ?? [])
      t.ok(
        entities.every((x) => x !== undefined && e in x),
        `${label}: has ${e}`,
      );
    for (const e of c.lacks ?? [])
      t.ok(
        entities.every((x) => x !== undefined && !(e in x)),
        `${label}: lacks ${e}`,
      );
    if (c.count !== undefined) t.equal(r.headers.get('ngsild-results-count'), c.count, `${label}: the count`);
    if (c.linkHas !== undefined) t.match(r.headers.get('link') ?? '', c.linkHas, `${label}: the Link header`);
    if (c.batchOk !== undefined) t.same([...(r.json?.success ?? [])].sort(), [...c.batchOk].sort(), `${label}: the entries done`);
    if (c.batchDenied !== undefined) {
      const errors = (r.json?.errors ?? []) as { entityId: string; error: { status: number } }[];
      t.same(errors.map((e) => e.entityId).sort(), [...c.batchDenied].sort(), `${label}: the entries refused`);
      t.ok(
        errors.every((e) => e.error.status === 403),
        `${label}: each refused entry is its 403`,
      );
    }
    if (c.then !== undefined) {
      const after = await send(broker, c.then.as, 'GET', c.then.path);
      t.equal(after.status, c.then.status, `${label}: then ${c.then.path}`);
      for (const [name, value] of Object.entries(c.then.valueOf ?? {})) t.equal(after.json?.[name]?.value, value, `${label}: then ${name}`);
    }
  }
  const lines = broker.logs.filter((l) => l.includes('Authorization headers over 512 bytes'));
  t.equal(lines.length, 1, 'the large Authorization header is logged once');
});

t.test("without --dsecNgsild a policy using the broker's own words is skipped, and the log says so", async (t) => {
  const words = [
    { uid: 'urn:p:w-tenant', as: 'admin', action: 'odrl:read', constraints: [{ left: 'ngsi-ld:tenant', op: 'odrl:eq', right: '' }] },
    { uid: 'urn:p:w-attr', as: 'admin', action: 'odrl:read', constraints: [{ left: 'ngsi-ld:attribute', op: 'odrl:eq', right: 'name' }] },
  ];
  // Ready once a set holding both is loaded: the policies are posted one by one, and a refresh between the two posts
  // loads a set of one (a 403 already).
  const bothLoaded = (b: Broker): boolean =>
    b.logs.some((l) => {
      const r = JSON.parse(l) as { msg?: string; skipped?: number };
      return r.msg === 'dsec: policy set loaded' && r.skipped === 2;
    });
  const broker = await brokerWith([], words.map(odrlPolicy), async (b) => bothLoaded(b));
  t.teardown(() => broker.stop());
  t.equal((await send(broker, 'admin', 'GET', `${NGSI}/types`)).status, 403, 'neither policy allows anything');
  for (const uid of ['urn:p:w-tenant', 'urn:p:w-attr']) {
    const line = broker.logs.map((l) => JSON.parse(l) as { msg: string }).find((l) => l.msg.includes(`'${uid}'`));
    t.equal(line?.msg, `dsec: policy '${uid}' skipped, the word is the broker's own and needs --dsecNgsild`, uid);
  }
});
