// Micro-benchmark of the dsec plugin's hot functions: one decision over 100 policies where the allowing one is
// last, and token verification per algorithm, a cache hit against a miss. Prints ops/s; run after `npm run build`:
// node dist/bench/micro/dsec-decide.js

import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { AuthVerdict, type AuthRequest } from '../../src/auth/contract.js';
import { importKeySet, usableKeys } from '../../src/plugins/auth/dsec/key-set.js';
import { DecisionInput } from '../../src/plugins/auth/dsec/odrl/input.js';
import { compilePolicySet, decide, type Decision } from '../../src/plugins/auth/dsec/odrl/policy-set.js';
import { TokenVerifier, bearerToken, type ClaimRules } from '../../src/plugins/auth/dsec/token.js';

const ORG = 'did:web:provider.example';

function report(name: string, ops: number, ms: number): void {
  process.stdout.write(
    `${name.padEnd(48)} ${Math.round((ops / ms) * 1000)
      .toLocaleString('en')
      .padStart(12)} ops/s\n`,
  );
}

async function measure(name: string, fn: () => unknown, minMs = 1000): Promise<void> {
  for (let i = 0; i < 1000; i++) await fn();
  let ops = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < minMs) {
    for (let i = 0; i < 200; i++) await fn();
    ops += 200;
    elapsed = performance.now() - start;
  }
  report(name, ops, elapsed);
}

function policy(i: number, type: string): unknown {
  return {
    'odrl:uid': `urn:bench:${i}`,
    'odrl:permission': {
      'odrl:action': { '@id': 'odrl:read' },
      'odrl:assignee': {
        '@type': 'odrl:PartyCollection',
        'odrl:refinement': { 'odrl:leftOperand': 'vc:role', 'odrl:operator': 'odrl:hasPart', 'odrl:rightOperand': 'OPERATOR' },
      },
      'odrl:target': {
        '@type': 'odrl:AssetCollection',
        'odrl:refinement': { 'odrl:leftOperand': 'ngsi-ld:entityType', 'odrl:operator': 'odrl:eq', 'odrl:rightOperand': type },
      },
    },
  };
}

const request: AuthRequest = {
  method: 'GET',
  path: '/ngsi-ld/v1/entities/urn:ngsi-ld:Car:1',
  params: [],
  ldOp: 0,
  ldOpName: '',
  route: '',
  tenant: '',
  entities: false,
  header: () => undefined,
  body: () => null,
  expand: () => null,
  expandDefault: (t) => t,
};
const credential = { issuer: 'did:web:issuer.example', credentialSubject: { roles: [{ target: ORG, names: ['OPERATOR'] }] } };

/** bench/auth.ts's set: anyone may read one type per policy, the type of the request last. */
function anyonePolicy(i: number, type: string): unknown {
  return {
    'odrl:uid': `urn:bench:any:${i}`,
    'odrl:permission': {
      'odrl:action': { '@id': 'odrl:read' },
      'odrl:assignee': { '@id': 'vc:any' },
      'odrl:target': {
        '@type': 'odrl:AssetCollection',
        'odrl:refinement': { 'odrl:leftOperand': 'ngsi-ld:entityType', 'odrl:operator': { '@id': 'odrl:eq' }, 'odrl:rightOperand': type },
      },
    },
  };
}

const input = new DecisionInput();
const out: Decision = { verdict: AuthVerdict.Deny, reason: '' };
for (const [name, make] of [
  ['role and type', policy],
  ['anyone, type', anyonePolicy],
] as const) {
  const set = compilePolicySet([Array.from({ length: 100 }, (_, i) => make(i, i === 99 ? 'Car' : `Type${i}`))], {
    organization: ORG,
    ngsild: false,
  });
  await measure(`decide: 100 policies (${name}), the last allows`, () => {
    decide(set, input.reset(request, credential, false, Date.now()), out);
    input.clear();
    if (out.verdict !== AuthVerdict.Allow) throw new Error('the last policy should allow');
  });
}

for (const alg of ['RS256', 'ES256'] as const) {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k' };
  const verifier = new TokenVerifier();
  verifier.setKeys(await importKeySet(usableKeys({ keys: [jwk] })));
  const rules: ClaimRules = { issuer: 'did:web:verifier', audience: null, leewaySeconds: 120 };
  const exp = Math.floor(Date.now() / 1000) + 3600;
  const tokens: string[] = [];
  for (let i = 0; i < 3000; i++) {
    tokens.push(
      await new SignJWT({ iss: 'did:web:verifier', exp, jti: String(i), verifiableCredential: credential })
        .setProtectedHeader({ alg, kid: 'k' })
        .sign(privateKey),
    );
  }
  const now = Math.floor(Date.now() / 1000);
  const hit = tokens[0] as string;
  await verifier.verify(hit, rules, now);
  await measure(`token ${alg}: cache hit, same string`, () => verifier.checkCached(hit, rules, now));
  // A request brings its header as a new string (the front decodes it from the socket): its hash is not known yet.
  const headerBytes = Buffer.from(`Bearer ${hit}`, 'latin1');
  await measure(`token ${alg}: cache hit, header of a request`, () =>
    verifier.checkCached(bearerToken(headerBytes.toString('latin1')) as string, rules, now),
  );
  let i = 0;
  await measure(
    `token ${alg}: cache miss (signature verified)`,
    () => {
      verifier.setKeys(verifier.keys!);
      return verifier.verify(tokens[i++ % tokens.length] as string, rules, now);
    },
    1500,
  );
}
