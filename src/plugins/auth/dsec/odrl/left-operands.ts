// The left operands of seed 000 §5.6: what each word reads from the request or the credential. A getter answers
// undefined for a value the request or credential does not have (§5.7 rule 4).

import type { DecisionInput } from './input.js';
import { deepEqual } from './compare.js';

export type Getter = (x: DecisionInput) => unknown;

/** Thrown when a credential holds two different role lists for the organisation (seed 000 §5.7 rule 5). */
export class RoleConflict extends Error {
  constructor() {
    super('the credential holds two different role lists for the organisation');
  }
}

const ROLE_CONFLICT = new RoleConflict();

function member(obj: unknown, key: string): unknown {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return undefined;
  return Object.prototype.hasOwnProperty.call(obj, key) ? (obj as Record<string, unknown>)[key] : undefined;
}

/** The value at a dotted path (`$.a.b` or `a.b`), through objects only, as the reference's walk() finds it. */
export function valueAtPath(root: unknown, keys: readonly string[]): unknown {
  let v = root;
  for (const k of keys) {
    v = member(v, k);
    if (v === undefined) return undefined;
  }
  return v;
}

export function pathKeys(path: string): string[] {
  return (path.startsWith('$.') ? path.slice(2) : path).split('.');
}

/**
 * The role names of the credential's entries (`listKey`) whose target is the organisation. Entries naming the
 * same list agree; two different lists are the reference engine's conflict error, a 503 here.
 */
function roleNames(credential: unknown, organization: string | undefined, listKey: string, namesKey: string): unknown {
  if (organization === undefined) return undefined;
  const list = member(member(credential, 'credentialSubject'), listKey);
  if (list === null || typeof list !== 'object') return undefined;
  let found: unknown = undefined;
  for (const entry of Array.isArray(list) ? list : Object.values(list)) {
    if (member(entry, 'target') !== organization) continue;
    const names = member(entry, namesKey);
    if (names === undefined) continue;
    if (found === undefined) found = names;
    else if (!deepEqual(found, names)) throw ROLE_CONFLICT;
  }
  return found;
}

/** The slot of a role-list word in DecisionInput (0: vc:role, 1: dome-op:role); null for other words. */
export function roleListSlot(word: string): 0 | 1 | null {
  return word === 'vc:role' ? 0 : word === 'dome-op:role' ? 1 : null;
}

/** How the role list of `slot` is read from a credential (it throws ROLE_CONFLICT on two different lists). */
export function roleListOf(slot: 0 | 1, organization: string | undefined): (credential: unknown) => unknown {
  return slot === 0
    ? (c) => roleNames(c, organization, 'roles', 'names')
    : (c) => roleNames(c, organization, 'rolesAndDuties', 'roleNames');
}

function tmfResource(x: DecisionInput): unknown {
  const p = x.path;
  const q = p.indexOf('?');
  const segments = (q < 0 ? p : p.slice(0, q)).split('/');
  for (let i = segments.length - 1; i >= 0; i--) {
    const s = segments[i] as string;
    if (!s.includes('ngsi-ld')) return s;
  }
  return undefined;
}

const undefinedValue: Getter = () => undefined;

/** Words that read nothing an HTTP request has (seed 000 §5.6, last paragraph): a rule on them is never true. */
export function isInertWord(word: string): boolean {
  return word.startsWith('json:') || word.startsWith('dspace:') || INERT_WORDS.has(word);
}

const INERT_WORDS = new Set([
  'dome-op:relatedParty',
  'dome-op:owner',
  'dome-op:relatedParty_role',
  'dome-op:validFor_startDateTime',
  'dome-op:validFor_endDateTime',
]);

/** Words that need an argument (a path). */
export const WORDS_WITH_ARGUMENT = new Set(['http:bodyValue', 'ovc:leftOperand']);

/** The broker's own words, read only with --dsecNgsild (seed 000 §5.8). */
export const BROKER_WORDS = new Set(['ngsi-ld:tenant', 'ngsi-ld:attribute']);

export const LEFT_OPERAND_WORDS = new Set([
  'ngsi-ld:entityType',
  'ngsi-ld:entityTypeGroup',
  'vc:role',
  'vc:type',
  'vc:currentParty',
  'dome-op:currentParty',
  'http:path',
  'http:bodyValue',
  'ovc:leftOperand',
  'ovc:credentialSubjectType',
  'odrl:dateTime',
  'odrl:dayOfWeek',
  'odrl:hourOfDay',
  'dome-op:role',
  'tmf:lifecycleStatus',
  'tmf:resource',
]);

export function issuerOf(x: DecisionInput): unknown {
  return member(x.credential, 'issuer');
}

/** The getter of a known word; `argument` is the path of the words that need one. */
export function leftOperandGetter(word: string, argument: string | undefined, organization: string | undefined): Getter {
  if (isInertWord(word)) return undefinedValue;
  switch (word) {
    case 'ngsi-ld:entityType':
    case 'ngsi-ld:entityTypeGroup':
      return (x) => x.entityType();
    case 'vc:role': {
      const compute = roleListOf(0, organization);
      return (x) => x.roles(0, compute);
    }
    case 'dome-op:role': {
      const compute = roleListOf(1, organization);
      return (x) => x.roles(1, compute);
    }
    case 'vc:type':
      return (x) => {
        const t = member(x.credential, 'type');
        return t === undefined ? undefined : Array.isArray(t) ? t : [t];
      };
    case 'vc:currentParty':
    case 'dome-op:currentParty':
      return issuerOf;
    case 'http:path':
      return (x) => x.httpPath();
    case 'http:bodyValue': {
      const keys = pathKeys(argument as string);
      return (x) => valueAtPath(x.body(), keys);
    }
    case 'ovc:leftOperand': {
      const keys = pathKeys(argument as string);
      return (x) => valueAtPath(x.credential, keys);
    }
    case 'ovc:credentialSubjectType':
      return (x) => member(member(x.credential, 'credentialSubject'), 'type');
    case 'odrl:dateTime':
      return (x) => x.now;
    case 'odrl:dayOfWeek':
      // seed 000 §5.6: 0 = Monday, UTC
      return (x) => (new Date(x.now).getUTCDay() + 6) % 7;
    case 'odrl:hourOfDay':
      return (x) => new Date(x.now).getUTCHours();
    case 'tmf:lifecycleStatus':
      return (x) => member(x.body(), 'lifeCycleStatus');
    case 'tmf:resource':
      return tmfResource;
    // seed 000 §5.8, the broker's own words (compiled only with --dsecNgsild)
    case 'ngsi-ld:tenant':
      return (x) => x.tenant();
    case 'ngsi-ld:attribute':
      return (x) => x.attribute;
    default:
      throw new Error(`no getter for '${word}'`);
  }
}
