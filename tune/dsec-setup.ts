// `auth: "dsec"` workloads (a data-space mix): a key pair, its JWK Set, a policy file and a signed token, made once
// per tuning run in a private directory, as bench/auth.ts sets up the dsec plugin. The policies allow what the load
// does on the workload's types (read, create; modify by path), 40 policies of other types sit before them so every decision
// walks a realistic set, and one allows the subscriptions and batch routes the seeding uses.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { pathPolicy, typePolicy } from '../bench/odrl-policy.js';
import type { Workload } from './workload.js';
import { shortType } from './entities.js';

const ISSUER = 'did:web:verifier.tune';
const OTHER_POLICIES = 40;

export interface DsecSetup {
  /** Broker arguments. */
  args: string[];
  headers: Record<string, string>;
}

export async function dsecSetup(w: Workload, dir: string): Promise<DsecSetup> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' }] }));
  const policies: Record<string, unknown>[] = [];
  for (let i = 0; i < OTHER_POLICIES; i++) policies.push(typePolicy(`urn:p:other-${i}`, 'odrl:read', `https://example.org/Other${i}`));
  w.entities.types.forEach((t, i) => {
    // A query names the type (its IRI, the `type` parameter); a retrieve's id names it (its third part).
    policies.push(typePolicy(`urn:p:query-${i}`, 'odrl:read', t.type));
    policies.push(typePolicy(`urn:p:read-${i}`, 'odrl:read', shortType(t.type)));
    policies.push(typePolicy(`urn:p:create-${i}`, 'ngsild:create', t.type));
  });
  // PATCH .../entities/{id}/attrs ends in `attrs`: no type to read from the request, so modify is allowed by path.
  policies.push(pathPolicy('urn:p:modify', 'odrl:modify', '/ngsi-ld/v1/entities'));
  policies.push(pathPolicy('urn:p:subscriptions', 'odrl:use', '/ngsi-ld/v1/subscriptions'));
  policies.push(pathPolicy('urn:p:batch', 'odrl:use', '/ngsi-ld/v1/entityOperations'));
  writeFileSync(join(dir, 'policies.json'), JSON.stringify(policies));
  const token = await new SignJWT({
    verifiableCredential: { type: ['VerifiableCredential'], issuer: 'did:web:issuer.tune', credentialSubject: {} },
  })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuer(ISSUER)
    .setIssuedAt()
    .setExpirationTime('6h')
    .sign(privateKey);
  return {
    args: ['--auth', 'dsec', '--dsecJwks', join(dir, 'jwks.json'), '--dsecIssuer', ISSUER, '--dsecPolicies', join(dir, 'policies.json')],
    headers: { authorization: `Bearer ${token}` },
  };
}
