// The decision table of seed 000 §5.6 and §5.7: every case (policies, credential, request, verdict) is a JSON
// fixture under test/fixtures/dsec/decision-table, evaluated by the compiled policy set.

import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { AuthVerdict, type AuthRequest } from '../../src/auth/contract.js';
import { DecisionInput } from '../../src/plugins/auth/dsec/odrl/input.js';
import { compilePolicySet, decide, type Decision } from '../../src/plugins/auth/dsec/odrl/policy-set.js';
import { repoPath } from '../helpers/repo.js';

interface FixtureRequest {
  method: string;
  path: string;
  params?: [string, string][];
  headers?: Record<string, string>;
  body?: unknown;
  bodyText?: string;
}

interface FixtureCase {
  name: string;
  policies: string[];
  credential: string | null;
  request: FixtureRequest;
  expect: 'allow' | 'deny' | 'unavailable';
  /** Substrings each expected skip reason contains, in order. */
  skipped?: string[];
  strippedPath?: boolean;
  now?: string;
  organization?: string | null;
}

interface Fixture {
  description: string;
  organization?: string;
  now?: string;
  policies: Record<string, unknown>;
  credentials: Record<string, unknown>;
  cases: FixtureCase[];
}

const dir = repoPath('test/fixtures/dsec/decision-table/');
const VERDICTS = { allow: AuthVerdict.Allow, deny: AuthVerdict.Deny, unavailable: AuthVerdict.Unavailable } as const;

function authRequest(r: FixtureRequest): AuthRequest {
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

const fixtures = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((file) => [file, JSON.parse(readFileSync(dir + file, 'utf8')) as Fixture] as const);

t.test('the table holds at least 100 cases', async (t) => {
  const count = fixtures.reduce((n, [, f]) => n + f.cases.length, 0);
  t.ok(count >= 100, `${count} cases`);
});

for (const [file, fixture] of fixtures) {
  t.test(`${file}: ${fixture.description}`, async (t) => {
    for (const c of fixture.cases) {
      const organization = c.organization === undefined ? fixture.organization : (c.organization ?? undefined);
      const docs = c.policies.map((name) => {
        const p = fixture.policies[name];
        if (p === undefined) throw new Error(`${file}: case '${c.name}' names the unknown policy '${name}'`);
        return p;
      });
      const set = compilePolicySet(docs, { organization, ngsild: false });
      const credential = c.credential === null ? null : fixture.credentials[c.credential];
      if (credential === undefined) throw new Error(`${file}: case '${c.name}' names an unknown credential`);
      const now = Date.parse(c.now ?? fixture.now ?? '2024-05-15T10:30:00Z');
      const x = new DecisionInput().reset(authRequest(c.request), credential, c.strippedPath === true, now);
      const d = decide(set, x, { verdict: AuthVerdict.Deny, reason: '' } as Decision);
      t.equal(AuthVerdict[d.verdict], AuthVerdict[VERDICTS[c.expect]], `${c.name} (${d.reason})`);
      if (c.skipped !== undefined) {
        t.equal(set.skipped.length, c.skipped.length, `${c.name}: skipped policy count`);
        c.skipped.forEach((s, i) => t.match(set.skipped[i]?.reason ?? '', s, `${c.name}: skip reason ${i}`));
      }
    }
  });
}
