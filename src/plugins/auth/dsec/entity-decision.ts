// --dsecNgsild (seed 000 §5.8): decisions on the entity as NGSI-LD has it. A request's plan (the policies whose rules on
// the request hold, per action) is made once; each entity is then decided on the rules that read it alone.

import { AuthVerdict, type AuthEntity, type AuthRequest } from '../../../auth/contract.js';
import { ENTITY_RULES, REQUEST_RULES, type CompiledPolicy } from './odrl/compile.js';
import { ANY_ATTRIBUTE, type DecisionInput } from './odrl/input.js';
import { RoleConflict } from './odrl/left-operands.js';
import type { PolicySet } from './odrl/policy-set.js';

/** seed 000 §5.8 "the action": the method an operation's action word must let through, by LdOp name. */
const READ_OPS = new Set([
  'RetrieveEntity',
  'QueryEntities',
  'QueryPost',
  'TemporalRetrieve',
  'TemporalQuery',
  'TemporalQueryPost',
  // seed 000 §5.2: the entities a Snapshot captures or a clone copies are read, each with its own types.
  'CreateSnapshot',
  'CloneSnapshot',
]);
const CREATE_OPS = new Set(['CreateEntity', 'BatchCreate']);
/** An upsert is a create for a new entity, an update for an existing one. */
const UPSERT_OPS = new Set(['BatchUpsert', 'TemporalCreate']);
/** The deletions, of an entity or of what it holds (an attribute, an instance). */
const DELETE_OPS = new Set([
  'DeleteEntity',
  'BatchDelete',
  'PurgeEntities',
  'TemporalDelete',
  'DeleteAttr',
  'TemporalDeleteAttr',
  'TemporalDeleteInstance',
]);
/** seed 000 §5.8: writes of the whole entity need a policy that holds whatever the attribute. */
const WHOLE_ENTITY_OPS = new Set(['DeleteEntity', 'ReplaceEntity', 'BatchDelete', 'PurgeEntities', 'TemporalDelete']);

/** seed 000 §5.2: not decided entity by entity, so refused with --dsecNgsild (README: 403, and why). */
const UNDECIDABLE_OPS = new Set(['CreateEntityMap', 'RetrieveEntityMap', 'UpdateEntityMap', 'DeleteEntityMap']);

const GET = ['GET'] as const;
const POST = ['POST'] as const;
const PATCH = ['PATCH'] as const;
const DELETE = ['DELETE'] as const;
const POST_OR_PATCH = ['POST', 'PATCH'] as const;

/** The methods the operation's entities may be decided with (two for an upsert: create or update). */
export function methodsOf(ldOpName: string): readonly string[] {
  if (READ_OPS.has(ldOpName)) return GET;
  if (CREATE_OPS.has(ldOpName)) return POST;
  if (UPSERT_OPS.has(ldOpName)) return POST_OR_PATCH;
  if (DELETE_OPS.has(ldOpName)) return DELETE;
  // every other entity write (merge, replace, append, update, batch update and merge, temporal instances): a modification
  return PATCH;
}

/** The method one entity of the operation is decided with. */
function methodFor(ldOpName: string, entity: AuthEntity): string {
  if (UPSERT_OPS.has(ldOpName)) return (entity.creates ?? !entity.storedTypes) ? 'POST' : 'PATCH';
  return (methodsOf(ldOpName)[0] as string) ?? 'PATCH';
}

/** Why a request with --dsecNgsild cannot be decided entity by entity, or null. */
export function undecidable(req: AuthRequest, x: DecisionInput): string | null {
  if (UNDECIDABLE_OPS.has(req.ldOpName)) return 'EntityMaps are not decided entity by entity (--dsecNgsild)';
  if (!req.entities) return null;
  let join: unknown;
  for (const [k, v] of req.params) if (k === 'join') join = v;
  if (join === undefined && (req.ldOpName === 'QueryPost' || req.ldOpName === 'TemporalQueryPost')) {
    const body = x.body();
    if (body !== null && typeof body === 'object' && !Array.isArray(body)) join = (body as Record<string, unknown>)['join'];
  }
  return join === 'inline' ? 'join=inline is not decided entity by entity (--dsecNgsild): the nested entities are not asked about' : null;
}

/** What a request may still be allowed once its entities are known: per method, the policies whose request rules hold. */
export interface EntityPlan {
  readonly set: PolicySet;
  readonly identity: unknown;
  readonly methods: readonly string[];
  /** Per method (same index), the candidates in the PAP's order. */
  readonly candidates: readonly (readonly CompiledPolicy[])[];
  /**
   * Per method, for many candidates: whose request slots held (1), to meet them through the policy set's type index.
   * A list cut at a policy that allows every entity never gets there (decideEntity allows at once).
   */
  readonly members: readonly (Uint8Array | null)[];
}

const NO_CANDIDATES: readonly CompiledPolicy[] = [];

/** From this many candidates an entity is decided through the type index rather than by walking them all. */
const INDEXED_FROM = 8;

/** The policies of one method by the expanded types they need (CompiledPolicy.typeKeys); `rest` need none. */
interface TypeIndex {
  readonly byType: ReadonlyMap<string, readonly CompiledPolicy[]>;
  readonly rest: readonly CompiledPolicy[];
}

/** Built once per policy set and method, on first use: the set is replaced whole, never changed. */
const typeIndexes = new WeakMap<PolicySet, Map<string, TypeIndex>>();

function typeIndexOf(set: PolicySet, method: string): TypeIndex {
  let perMethod = typeIndexes.get(set);
  if (perMethod === undefined) typeIndexes.set(set, (perMethod = new Map()));
  let index = perMethod.get(method);
  if (index === undefined) {
    const byType = new Map<string, CompiledPolicy[]>();
    const rest: CompiledPolicy[] = [];
    for (const p of set.byMethod.get(method) ?? NO_CANDIDATES) {
      if (p.typeKeys === null) {
        rest.push(p);
        continue;
      }
      for (const t of new Set(p.typeKeys)) {
        let list = byType.get(t);
        if (list === undefined) byType.set(t, (list = []));
        list.push(p);
      }
    }
    perMethod.set(method, (index = { byType, rest }));
  }
  return index;
}

/**
 * The request's plan: the rules on the request alone are evaluated once here, never per entity. `x` is reset for the
 * request; throws RoleConflict (a 503) as decide() does.
 */
export function planOf(set: PolicySet, req: AuthRequest, identity: unknown, x: DecisionInput): EntityPlan {
  const methods = methodsOf(req.ldOpName);
  const candidates: (readonly CompiledPolicy[])[] = [];
  const members: (Uint8Array | null)[] = [];
  for (const m of methods) {
    x.method = m;
    const list: CompiledPolicy[] = [];
    // Policies that differ only in what they need of the entity (a type each, say) share their request rules (one
    // request slot): those are evaluated once per method (x.method is a fact they read). held: 0 not yet, 1 true, 2 false.
    const policies = set.byMethod.get(m) ?? NO_CANDIDATES;
    const slots = set.requestSlots.get(m) as Int32Array;
    const held = new Uint8Array(set.requestSlotCount);
    for (let i = 0; i < policies.length; i++) {
      const p = policies[i] as CompiledPolicy;
      const slot = slots[i] as number;
      if (held[slot] === 0) held[slot] = p.holdsKinds(x, REQUEST_RULES) ? 1 : 2;
      if (held[slot] === 1) list.push(p);
      // a policy that allows every entity ends the list: no later one is ever asked (§5.7 rule 2)
      if (list.length > 0 && (list[list.length - 1] as CompiledPolicy).entityFree) break;
    }
    candidates.push(list);
    members.push(list.length >= INDEXED_FROM ? held : null);
  }
  return { set, identity, methods, candidates, members };
}

/** Whether some candidate may allow some entity: else the request is refused before its @context is fetched. */
export function mayAllow(plan: EntityPlan): boolean {
  for (const list of plan.candidates) if (list.length > 0) return true;
  return false;
}

/**
 * Whether some candidate of method `index` has its entity rules hold for the entity facts in `x`. Which one allows
 * does not change the answer (the request rules, where role conflicts arise, were evaluated in the plan), so many
 * candidates are met through the type index: only those needing one of the entity's types, and those needing none.
 */
function someHolds(plan: EntityPlan, index: number, x: DecisionInput): boolean {
  const members = plan.members[index];
  if (members === null || members === undefined) {
    const list = plan.candidates[index] as readonly CompiledPolicy[];
    for (let i = 0; i < list.length; i++) if (holds(list[i] as CompiledPolicy, x)) return true;
    return false;
  }
  const typeIndex = typeIndexOf(plan.set, plan.methods[index] as string);
  const types = x.entityTypes ?? [];
  for (let t = 0; t < types.length; t++) {
    const list = typeIndex.byType.get(types[t] as string);
    if (list === undefined) continue;
    for (let i = 0; i < list.length; i++) {
      const p = list[i] as CompiledPolicy;
      if (members[p.requestSlot] === 1 && holds(p, x)) return true;
    }
  }
  const rest = typeIndex.rest;
  for (let i = 0; i < rest.length; i++) {
    const p = rest[i] as CompiledPolicy;
    if (members[p.requestSlot] === 1 && holds(p, x)) return true;
  }
  return false;
}

function holds(p: CompiledPolicy, x: DecisionInput): boolean {
  return p.entityFree || p.holdsKinds(x, ENTITY_RULES);
}

/** What the entity hook answers: a verdict, and for a whole-entity read whether only some attributes are allowed. */
export interface EntityOutcome {
  verdict: AuthVerdict;
  partial: boolean;
}

/**
 * seed 000 §5.8: one entity (its types in `x` already), for the operation of `req`. An attribute is allowed when some
 * policy allows it (not necessarily the same one for every attribute); a whole-entity write needs one policy that
 * holds whatever the attribute; a read that only some attributes are allowed for is `partial`.
 */
export function decideEntity(plan: EntityPlan, req: AuthRequest, entity: AuthEntity, x: DecisionInput, out: EntityOutcome): EntityOutcome {
  out.partial = false;
  out.verdict = AuthVerdict.Deny;
  const method = methodFor(req.ldOpName, entity);
  const index = plan.methods.indexOf(method);
  const list = index < 0 ? NO_CANDIDATES : (plan.candidates[index] as readonly CompiledPolicy[]);
  if (list.length === 0) return out;
  // planOf ends a list at a policy that allows every entity: this one is allowed, whatever its types and attributes
  if ((list[list.length - 1] as CompiledPolicy).entityFree) {
    out.verdict = AuthVerdict.Allow;
    return out;
  }
  x.method = method;
  x.entityTypes = entity.types;
  try {
    // one attribute alone: after a partial answer, or a route on one attribute
    if (entity.attribute !== undefined) {
      x.attribute = entity.attribute;
      if (someHolds(plan, index, x)) out.verdict = AuthVerdict.Allow;
      return out;
    }
    // whatever the attribute: no attribute is given, so a rule on one is not true (§5.7 rule 4)
    x.attribute = undefined;
    if (someHolds(plan, index, x)) {
      out.verdict = AuthVerdict.Allow;
      return out;
    }
    if (WHOLE_ENTITY_OPS.has(req.ldOpName)) return out;
    const written = entity.read ? undefined : entity.attrsWritten;
    if (written !== undefined && written.length > 0) {
      for (const a of written) {
        x.attribute = a;
        if (!someHolds(plan, index, x)) return out;
      }
      out.verdict = AuthVerdict.Allow;
      return out;
    }
    // a read (or a write naming no attribute): some policy holds on the entity's types for some attribute at most
    x.attribute = ANY_ATTRIBUTE;
    if (someHolds(plan, index, x)) {
      out.verdict = AuthVerdict.Allow;
      out.partial = entity.read;
    }
    return out;
  } catch (e) {
    if (!(e instanceof RoleConflict)) throw e;
    out.verdict = AuthVerdict.Unavailable;
    return out;
  } finally {
    x.entityTypes = null;
    x.attribute = undefined;
  }
}
