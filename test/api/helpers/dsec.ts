// Keys, tokens and ODRL policies for tests of `--auth dsec` through a broker (seed 000 §2.7, §2.9, §5.6), over the
// plugin's test harness (test/fixtures/dsec/harness.ts): its key in a JWK Set file, tokens carrying a given
// credential; policies on an entity type as the PAP holds them come from bench/odrl-policy.ts.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ISSUER, makeKey, signToken } from '../../fixtures/dsec/harness.js';

export { ISSUER };
/** Policies on an entity type as the PAP holds them: the one builder (bench/odrl-policy.ts). */
export { typePolicy } from '../../../bench/odrl-policy.js';

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

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
