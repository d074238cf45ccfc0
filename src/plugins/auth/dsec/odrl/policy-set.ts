// A policy set: the documents of a policy source (the PAP's listing, an array of policies, one policy, or an
// @graph; seed 000 §5.4 `--dsecPolicies`) compiled in the PAP's order, and the decision over it (§5.7).

import { AuthVerdict } from '../../../../auth/contract.js';
import { compilePolicy, type CompileOptions, type CompiledPolicy, type SkippedPolicy } from './compile.js';
import { Fact, type DecisionInput } from './input.js';
import { RoleConflict, roleListOf } from './left-operands.js';
import { NO_PREFIXES, prefixesOf, type PrefixMap } from './terms.js';

export interface PolicySet {
  readonly policies: readonly CompiledPolicy[];
  readonly skipped: readonly SkippedPolicy[];
  /**
   * Per method, the policies whose first rule (the action) lets it through, in the PAP's order: every other
   * policy is false at its first rule for that method, before any rule that could read a role list.
   */
  readonly byMethod: ReadonlyMap<string, readonly CompiledPolicy[]>;
  /**
   * Per method, aligned with byMethod: each policy's request slot, one per distinct CompiledPolicy.requestKey
   * (0 .. requestSlotCount - 1). --dsecNgsild evaluates the request rules of a slot once per request and method.
   */
  readonly requestSlots: ReadonlyMap<string, Int32Array>;
  readonly requestSlotCount: number;
  /** How the role lists are read (slot 0: vc:role, 1: dome-op:role), to learn whether they conflict. */
  readonly roleLists: readonly [(credential: unknown) => unknown, (credential: unknown) => unknown];
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A PAP listing entry: `{id, odrl:uid, odrl}` with the policy serialised as a string (seed 000 §2.9). */
function isListingEntry(v: unknown): v is Obj {
  return isObj(v) && typeof v['odrl'] === 'string';
}

interface Pending {
  raw: unknown;
  prefixes: PrefixMap;
  /** Set when the entry could not be read at all. */
  error?: string;
  uid?: string | null;
}

/** The policies of one document, in order. */
export function policiesOfDocument(doc: unknown, into: Pending[] = []): Pending[] {
  if (Array.isArray(doc)) {
    for (const entry of doc) {
      if (isListingEntry(entry)) {
        const uid = typeof entry['odrl:uid'] === 'string' ? entry['odrl:uid'] : null;
        try {
          policiesOfDocument(JSON.parse(entry['odrl'] as string), into);
        } catch {
          into.push({ raw: null, prefixes: NO_PREFIXES, error: 'its odrl member is no JSON', uid });
        }
      } else {
        into.push({ raw: entry, prefixes: NO_PREFIXES });
      }
    }
  } else if (isObj(doc) && Array.isArray(doc['@graph'])) {
    const prefixes = prefixesOf(doc['@context']);
    for (const p of doc['@graph'] as unknown[]) into.push({ raw: p, prefixes });
  } else {
    into.push({ raw: doc, prefixes: NO_PREFIXES });
  }
  return into;
}

/** Compiles the documents of a source; one policy per uid, the first kept (seed 000 §2.9). */
export function compilePolicySet(documents: readonly unknown[], opts: CompileOptions): PolicySet {
  const pending: Pending[] = [];
  for (const d of documents) policiesOfDocument(d, pending);
  const policies: CompiledPolicy[] = [];
  const skipped: SkippedPolicy[] = [];
  const seen = new Set<string>();
  for (const p of pending) {
    if (p.error !== undefined) {
      skipped.push({ kind: 'skipped', uid: p.uid ?? null, reason: p.error });
      continue;
    }
    const c = compilePolicy(p.raw, opts, p.prefixes);
    if (c.kind === 'skipped') {
      skipped.push(c);
    } else if (seen.has(c.uid)) {
      skipped.push({ kind: 'skipped', uid: c.uid, reason: 'another policy has the same odrl:uid' });
    } else {
      seen.add(c.uid);
      policies.push(c);
    }
  }
  const byMethod = new Map<string, CompiledPolicy[]>();
  for (const p of policies) {
    for (const m of p.methods) {
      let list = byMethod.get(m);
      if (list === undefined) byMethod.set(m, (list = []));
      list.push(p);
    }
  }
  const slotOfKey = new Map<string, number>();
  const slotOf = (p: CompiledPolicy): number => {
    let slot = slotOfKey.get(p.requestKey);
    if (slot === undefined) slotOfKey.set(p.requestKey, (slot = slotOfKey.size));
    p.requestSlot = slot;
    return slot;
  };
  const requestSlots = new Map<string, Int32Array>();
  for (const [m, list] of byMethod) requestSlots.set(m, Int32Array.from(list, slotOf));
  return {
    policies,
    skipped,
    byMethod,
    requestSlots,
    requestSlotCount: slotOfKey.size,
    roleLists: [roleListOf(0, opts.organization), roleListOf(1, opts.organization)],
  };
}

const NO_POLICIES: readonly CompiledPolicy[] = [];
const NOT_READ = Symbol('not read');

export interface Decision {
  verdict: AuthVerdict;
  /** The uid of the allowing policy, or why none allowed. */
  reason: string;
}

/** Whether a rule before the guard may throw: a role list it reads conflicts (bit 1: slot 0, bit 2: slot 1). */
function rolesMayThrow(set: PolicySet, x: DecisionInput, lists: number): boolean {
  return ((lists & 1) !== 0 && x.rolesConflict(0, set.roleLists[0])) || ((lists & 2) !== 0 && x.rolesConflict(1, set.roleLists[1]));
}

/**
 * seed 000 §5.7: the first policy, in the PAP's order, that allows decides; none allows nothing; a role
 * conflict met before it is a 503. Only the policies whose action lets the method through are visited; one whose
 * guard the request fails is false without its rules run, unless a rule before the guard would meet a conflict.
 */
export function decide(set: PolicySet, x: DecisionInput, out: Decision): Decision {
  const policies = set.byMethod.get(x.method) ?? NO_POLICIES;
  let entityType: unknown = NOT_READ;
  let lastSegment: unknown = NOT_READ;
  for (let i = 0; i < policies.length; i++) {
    const p = policies[i] as CompiledPolicy;
    const g = p.guard;
    if (g !== null) {
      let v: unknown;
      if (g.fact === Fact.EntityType) v = entityType === NOT_READ ? (entityType = x.entityType()) : entityType;
      else v = lastSegment === NOT_READ ? (lastSegment = x.lastSegment()) : lastSegment;
      if (
        v !== g.value &&
        (g.values.length === 1 || !g.values.includes(v as string)) &&
        (g.rolesBefore === 0 || !rolesMayThrow(set, x, g.rolesBefore))
      )
        continue;
    }
    try {
      if (p.allowsFrom(x, 1)) {
        out.verdict = AuthVerdict.Allow;
        out.reason = p.uid;
        return out;
      }
    } catch (e) {
      if (!(e instanceof RoleConflict)) throw e;
      out.verdict = AuthVerdict.Unavailable;
      out.reason = `policy '${p.uid}': ${e.message}`;
      return out;
    }
  }
  out.verdict = AuthVerdict.Deny;
  out.reason = set.policies.length === 0 ? 'no policy is defined' : 'no policy allows the request';
  return out;
}
