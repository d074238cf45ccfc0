// Keys, tokens and ODRL policies for tests of `--auth dsec` through a broker (seed 000 §2.7, §2.9, §5.6), over the
// plugin's test harness (test/fixtures/dsec/harness.ts): its key in a JWK Set file, tokens carrying a given
// credential, policies on an entity type as the PAP holds them.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ISSUER, makeKey, signToken } from '../../fixtures/dsec/harness.js';

export { ISSUER };
const ODRL_CONTEXT = { odrl: 'http://www.w3.org/ns/odrl/2/' };

export interface Signer {
  /** The file of the JWK Set (`--dsecJwks`). */
  jwksFile: string;
  /** A token carrying `credential` as its verifiableCredential, valid `seconds` from now. */
  token(credential: unknown, seconds?: number): Promise<string>;
}

/** An RS256 key (the harness's) and its JWK Set written in `dir`. */
export async function makeSigner(dir: string): Promise<Signer> {
  const key = await makeKey('k1', 'RS256');
  const jwksFile = join(dir, 'jwks.json');
  writeFileSync(jwksFile, JSON.stringify({ keys: [key.publicJwk] }));
  return { jwksFile, token: (credential, seconds = 600) => signToken(key, { verifiableCredential: credential }, { expSeconds: seconds }) };
}

/** A credential of `issuer`, optionally with roles for an organisation and an expirationDate (VC 1.1). */
export function credential(issuer: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: ['VerifiableCredential'], issuer, credentialSubject: { type: 'gx:LegalParticipant' }, ...extra };
}

/** A refinement on `ngsi-ld:entityType` equal to `entityType`. */
function typeTarget(entityType: string): Record<string, unknown> {
  return {
    '@type': 'odrl:AssetCollection',
    'odrl:source': 'urn:asset',
    'odrl:refinement': {
      '@type': 'odrl:Constraint',
      'odrl:leftOperand': 'ngsi-ld:entityType',
      'odrl:operator': { '@id': 'odrl:eq' },
      'odrl:rightOperand': entityType,
    },
  };
}

/** A policy allowing `action` on entities of `entityType` to `assignee` (`vc:any`: anyone; else a credential issuer). */
export function typePolicy(uid: string, action: string, entityType: string, assignee = 'vc:any'): Record<string, unknown> {
  return {
    '@context': ODRL_CONTEXT,
    '@type': 'odrl:Policy',
    'odrl:uid': uid,
    'odrl:permission': {
      '@type': 'odrl:Permission',
      'odrl:action': { '@id': action },
      'odrl:assignee': assignee === 'vc:any' ? { '@id': 'vc:any' } : assignee,
      'odrl:target': typeTarget(entityType),
    },
  };
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
