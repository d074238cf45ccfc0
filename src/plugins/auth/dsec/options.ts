// The options of `--auth dsec` (seed 000 §5.4) and their validation at register time: a refused option set
// throws, which stops the broker with exit status 1 (§5.1 rule 4).

import type { OptionSpec, OptionValues } from '../../../auth/contract.js';

export const options: OptionSpec[] = [
  {
    name: 'dsecDiscovery',
    type: 'string',
    help: "URL of the verifier's OpenID discovery document: jwks_uri gives the keys, issuer the required iss",
  },
  { name: 'dsecJwks', type: 'string', help: 'URL or file of the JWK Set itself, instead of --dsecDiscovery; needs --dsecIssuer' },
  { name: 'dsecIssuer', type: 'string', help: "issuer (iss) a token must have; default: the discovery document's issuer" },
  { name: 'dsecAudience', type: 'string', help: 'an audience (aud) a token must have; default: aud is not checked' },
  { name: 'dsecLeeway', type: 'int', default: 120, min: 0, help: 'seconds of clock skew allowed on exp and nbf' },
  { name: 'dsecPap', type: 'string', help: 'base URL of the policy administration point; policies are read from its GET /policy' },
  {
    name: 'dsecPolicies',
    type: 'string',
    help: "URL or file of the policies themselves (the PAP's listing, an array of ODRL policies, one policy, or an @graph), instead of --dsecPap",
  },
  {
    name: 'dsecOrganization',
    type: 'string',
    help: "the provider's DID (the PAP's organisation DID); vc:role reads a credential's roles for it",
  },
  {
    name: 'dsecRefresh',
    type: 'int',
    default: 30,
    min: 1,
    help: 'seconds between two fetches of keys and policies (every second while either is missing)',
  },
  {
    name: 'dsecStrippedPath',
    type: 'bool',
    default: false,
    help: "http:path reads the x-stripped-path header; only behind a gateway that sets it and drops the client's",
  },
  {
    name: 'dsecAnonymous',
    type: 'bool',
    default: false,
    help: 'a request without a token is let in as no one instead of 401; only a vc:any policy can then allow it anything',
  },
  {
    name: 'dsecNgsild',
    type: 'bool',
    default: false,
    help: 'decide on the entity as NGSI-LD has it (stored expanded types, entity by entity in batches and queries, attributes, tenant)',
  },
  {
    name: 'dsecOwnerMaxAge',
    type: 'int',
    default: 0,
    min: 0,
    help: "seconds a subscription owner's credential holds after the subscription is made or updated; 0 = until the credential's own validUntil",
  },
];

/** Where a key set or a policy set is read from. */
export type Source = { kind: 'url'; url: string } | { kind: 'file'; path: string };

export interface DsecConfig {
  keys: { kind: 'discovery'; url: string } | { kind: 'jwks'; source: Source };
  /** Configured issuer; null: the discovery document's. */
  issuer: string | null;
  audience: string | null;
  leewaySeconds: number;
  policies: { kind: 'pap'; url: string } | { kind: 'document'; source: Source };
  organization: string | undefined;
  refreshSeconds: number;
  strippedPath: boolean;
  anonymous: boolean;
  ngsild: boolean;
  ownerMaxAgeSeconds: number;
}

export class DsecOptionError extends Error {
  constructor(message: string) {
    super(`dsec: ${message}`);
  }
}

function text(values: OptionValues, name: string): string | null {
  const v = values[name];
  if (v === undefined || v === '' || v === false) return null;
  if (typeof v !== 'string') throw new DsecOptionError(`--${name} must be a text`);
  return v;
}

function int(values: OptionValues, name: string, dflt: number, min: number): number {
  const v = values[name];
  if (v === undefined) return dflt;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < min) throw new DsecOptionError(`--${name} must be an integer of at least ${min}, not '${String(v)}'`);
  return n;
}

function bool(values: OptionValues, name: string): boolean {
  const v = values[name];
  return v === true || v === 'true' || v === 1;
}

function httpUrl(name: string, v: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new DsecOptionError(`--${name} '${v}' is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new DsecOptionError(`--${name} '${v}' is not an http or https URL`);
  }
  return u.href;
}

/** A URL (http, https, file) or a file path. */
function source(name: string, v: string): Source {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) {
    if (/^file:/i.test(v)) {
      try {
        return { kind: 'file', path: new URL(v).pathname };
      } catch {
        throw new DsecOptionError(`--${name} '${v}' is not a file URL`);
      }
    }
    return { kind: 'url', url: httpUrl(name, v) };
  }
  return { kind: 'file', path: v };
}

export function readConfig(values: OptionValues): DsecConfig {
  const discovery = text(values, 'dsecDiscovery');
  const jwks = text(values, 'dsecJwks');
  const issuer = text(values, 'dsecIssuer');
  const pap = text(values, 'dsecPap');
  const policies = text(values, 'dsecPolicies');
  if (discovery === null && jwks === null) {
    throw new DsecOptionError('a key source is required: --dsecDiscovery <url> or --dsecJwks <url or file>');
  }
  if (discovery !== null && jwks !== null) throw new DsecOptionError('give --dsecDiscovery or --dsecJwks, not both');
  if (jwks !== null && issuer === null) throw new DsecOptionError('--dsecJwks needs --dsecIssuer (iss is always checked)');
  if (pap === null && policies === null) {
    throw new DsecOptionError('a policy source is required: --dsecPap <url> or --dsecPolicies <url or file>');
  }
  if (pap !== null && policies !== null) throw new DsecOptionError('give --dsecPap or --dsecPolicies, not both');
  const ngsild = bool(values, 'dsecNgsild');
  return {
    keys:
      discovery !== null
        ? { kind: 'discovery', url: httpUrl('dsecDiscovery', discovery) }
        : { kind: 'jwks', source: source('dsecJwks', jwks as string) },
    issuer,
    audience: text(values, 'dsecAudience'),
    leewaySeconds: int(values, 'dsecLeeway', 120, 0),
    policies:
      pap !== null
        ? { kind: 'pap', url: httpUrl('dsecPap', pap) }
        : { kind: 'document', source: source('dsecPolicies', policies as string) },
    organization: text(values, 'dsecOrganization') ?? undefined,
    refreshSeconds: int(values, 'dsecRefresh', 30, 1),
    strippedPath: bool(values, 'dsecStrippedPath'),
    anonymous: bool(values, 'dsecAnonymous'),
    ngsild,
    ownerMaxAgeSeconds: int(values, 'dsecOwnerMaxAge', 0, 0),
  };
}
