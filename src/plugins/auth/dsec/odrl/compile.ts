// One ODRL policy compiled into closures (seed 000 §2.9, §5.6, §5.7): a permission's rules in the order action,
// assignee, target, constraints; a policy that cannot be read is skipped with its reason.

import type { DecisionInput } from './input.js';
import {
  BROKER_WORDS,
  LEFT_OPERAND_WORDS,
  WORDS_WITH_ARGUMENT,
  isInertWord,
  issuerOf,
  leftOperandGetter,
  roleListSlot,
  type Getter,
} from './left-operands.js';
import { ANY_ATTRIBUTE, Fact } from './input.js';
import { F, T, U, isOperator, operatorFor, type Operator, type Tri } from './operators.js';
import { NO_PREFIXES, canonicalNode, canonicalTerm, prefixesOf, type PrefixMap } from './terms.js';
import { MAX_NESTING, nestedDeeperThan } from './depth.js';

export type Rule = (x: DecisionInput) => Tri;

export interface CompileOptions {
  /** --dsecOrganization: the DID whose roles `vc:role` and `dome-op:role` read. */
  organization?: string | undefined;
  /** --dsecNgsild: the broker's own words are read, and entity types and attributes decided entity by entity. */
  ngsild: boolean;
  /** With ngsild: expansion with the broker's default context, for the types and attributes a policy names (§5.8). */
  expandDefault?: ((term: string) => string) | undefined;
}

/**
 * What a top-level rule reads of the entity under --dsecNgsild (seed 000 §5.8), as bits: 0 is a rule on the request
 * alone, decided once per request; RULE_TYPE reads `ngsi-ld:entityType`, RULE_ATTRIBUTE `ngsi-ld:attribute`.
 */
export const RULE_TYPE = 1;
export const RULE_ATTRIBUTE = 2;

/** Which rule kinds (index: the kind's bits) a call of CompiledPolicy.holdsKinds evaluates. */
export type KindSelection = readonly [boolean, boolean, boolean, boolean];
/** The rules on the request alone. */
export const REQUEST_RULES: KindSelection = [true, false, false, false];
/** Every rule that reads the entity (types, attribute, or both). */
export const ENTITY_RULES: KindSelection = [false, true, true, true];

/**
 * A rule of a policy that is true exactly when a request fact is one of some strings (`ngsi-ld:entityType` eq a
 * type, an `odrl:Asset` target): a request whose fact is none of them makes the policy false at that rule.
 */
export interface PolicyGuard {
  readonly fact: Fact;
  readonly values: readonly string[];
  /** The first of `values`. */
  readonly value: string;
  /** The role lists (bit 1: vc:role, bit 2: dome-op:role) rules before the guard read: they may throw first. */
  readonly rolesBefore: number;
}

export interface CompiledPolicy {
  readonly kind: 'policy';
  readonly uid: string;
  /** The methods the first rule (the first permission's action) lets through; other methods fail it. */
  readonly methods: ReadonlySet<string>;
  /** The first guard after the action, if any. */
  readonly guard: PolicyGuard | null;
  /** Per top-level rule, what it reads of the entity (RULE_TYPE, RULE_ATTRIBUTE bits; 0: the request alone). */
  readonly kinds: readonly number[];
  /** Some rule reads `ngsi-ld:attribute`. */
  readonly readsAttribute: boolean;
  /**
   * --dsecNgsild: expanded types one of which an entity must have for the policy to hold (a positive `eq` or
   * `isAnyOf` of constant types, reached through conjunctions only); null when the policy names no such set.
   */
  readonly typeKeys: readonly string[] | null;
  /** No rule reads the entity: when the request rules hold, the policy allows every entity and attribute. */
  readonly entityFree: boolean;
  /**
   * Equal for policies whose request rules are the same rules in the same order (their REQUEST_RULES always agree,
   * throws included): --dsecNgsild evaluates them once per request for all of them (entity-decision.ts planOf).
   */
  readonly requestKey: string;
  /** Its request slot in the policy set that holds it (PolicySet.requestSlots; set by compilePolicySet, -1 before). */
  requestSlot: number;
  /** The rules of the kinds `select` names all hold (the others are not evaluated). May throw RoleConflict. */
  holdsKinds(x: DecisionInput, select: KindSelection): boolean;
  /** May throw RoleConflict. */
  allows(x: DecisionInput): boolean;
  /** The rules from `from` on: 1 when the action is known to let the method through. May throw RoleConflict. */
  allowsFrom(x: DecisionInput, from: number): boolean;
}

export interface SkippedPolicy {
  readonly kind: 'skipped';
  readonly uid: string | null;
  readonly reason: string;
}

class Skip extends Error {}

/** seed 000 §5.6, action words: the methods each allows. */
const ACTIONS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['odrl:read', new Set(['GET'])],
  ['odrl:modify', new Set(['PATCH'])],
  ['odrl:delete', new Set(['DELETE'])],
  ['ngsild:create', new Set(['POST'])],
  ['odrl:use', new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])],
  ['dome-op:read', new Set(['GET'])],
  ['dome-op:modify', new Set(['PATCH'])],
  ['dome-op:create', new Set(['POST'])],
  ['tmf:create', new Set(['POST'])],
  // seed 000 §5.6: accepted, mapping not shown; PAP 1.7.3 maps it as a modification
  ['dome-op:write', new Set(['PATCH'])],
]);

const LOGICAL_OPERANDS = ['odrl:and', 'odrl:andSequence', 'odrl:or', 'odrl:xone'] as const;

const NUMERIC_TYPES = new Set(
  [
    'integer',
    'int',
    'long',
    'short',
    'byte',
    'nonNegativeInteger',
    'positiveInteger',
    'negativeInteger',
    'nonPositiveInteger',
    'unsignedInt',
    'unsignedLong',
    'unsignedShort',
    'unsignedByte',
    'decimal',
    'float',
    'double',
  ].map((t) => `xsd:${t}`),
);

const DAY = /^(\d{4})-(\d{2})-(\d{2})/;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

const alwaysFalse: Rule = () => F;
const alwaysTrue: Rule = () => T;

const NO_METHODS: ReadonlySet<string> = new Set();

/** Operators that are true exactly when the left operand is one of constant strings. */
const MEMBERSHIP_OPERATORS = new Set(['odrl:isAnyOf', 'odrl:anyOf']);

class PolicyCompiler {
  /** The role lists read by the rules compiled so far (bit 1: vc:role, bit 2: dome-op:role). */
  roleLists = 0;
  /** The methods of the first action compiled. */
  methods: ReadonlySet<string> | null = null;
  /** Rules that are guards, with their fact and values. */
  private readonly guards = new Map<Rule, { fact: Fact; values: readonly string[] }>();
  /** For each top-level rule, the role lists the rules before it read. */
  private readonly rolesBefore: number[] = [];
  /** What the rule being compiled reads of the entity (RULE_TYPE, RULE_ATTRIBUTE bits). */
  private reads = 0;
  /** Per top-level rule, what it reads of the entity. */
  readonly kinds: number[] = [];
  /** Per top-level rule, its canonical source as JSON. */
  private readonly sources: string[] = [];
  /** How many `or`/`xone` enclose the constraint being compiled: a type rule under one is no necessary condition. */
  private disjunctive = 0;
  /** The first necessary set of entity types met (CompiledPolicy.typeKeys). */
  typeKeys: readonly string[] | null = null;

  constructor(
    private readonly opts: CompileOptions,
    private readonly prefixes: PrefixMap,
  ) {}

  term(s: string): string {
    return canonicalTerm(s, this.prefixes);
  }

  /** A word given as a string or as `{"@id": word}`. */
  word(v: unknown, what: string): string {
    if (typeof v === 'string') return this.term(v);
    if (isObj(v) && typeof v['@id'] === 'string') return v['@id'];
    throw new Skip(`${what} is neither a word nor an object with @id`);
  }

  permission(p: unknown, top: Obj, rules: Rule[]): void {
    if (!isObj(p)) throw new Skip('a permission is not an object');
    if (typeof p['@type'] === 'string' && p['@type'] !== 'odrl:Permission') {
      throw new Skip(`a permission has type '${p['@type']}'`);
    }
    if (p['odrl:action'] === undefined) throw new Skip('a permission has no action');
    const assignee = p['odrl:assignee'] ?? top['odrl:assignee'];
    if (assignee === undefined) throw new Skip('a permission has no assignee');
    const target = p['odrl:target'] ?? top['odrl:target'];
    if (target === undefined) throw new Skip('a permission has no target');
    this.push(rules, ['action', p['odrl:action']], () => this.action(p['odrl:action']));
    this.push(rules, ['assignee', assignee], () => this.assignee(assignee));
    this.push(rules, ['target', target], () => this.target(target));
    for (const [k, v] of Object.entries(p)) {
      if (k === 'odrl:constraint' || k === 'ovc:constraint') this.push(rules, ['constraint', v], () => this.constraints(v));
    }
  }

  /** Compiles one top-level rule, noting the role lists read before it. */
  private push(rules: Rule[], source: unknown, compile: () => Rule): void {
    this.rolesBefore.push(this.roleLists);
    this.reads = 0;
    rules.push(compile());
    this.kinds.push(this.reads);
    this.sources.push(JSON.stringify(source));
  }

  /**
   * CompiledPolicy.requestKey: the canonical sources of the request rules in order (the entity rules' places kept
   * empty), with the prefixes the words were read with. A rule is a function of its source and the prefixes only.
   */
  requestKey(): string {
    const parts = this.kinds.map((k, i) => (k === 0 ? (this.sources[i] as string) : ''));
    return JSON.stringify([[...this.prefixes], parts]);
  }

  /** The first top-level rule after the action that is a guard. */
  guardOf(rules: readonly Rule[]): PolicyGuard | null {
    for (let i = 1; i < rules.length; i++) {
      const g = this.guards.get(rules[i] as Rule);
      if (g !== undefined)
        return { fact: g.fact, values: g.values, value: g.values[0] as string, rolesBefore: this.rolesBefore[i] as number };
    }
    return null;
  }

  action(v: unknown): Rule {
    const w = this.word(v, 'the action');
    if (isInertWord(w)) {
      this.methods ??= NO_METHODS;
      return alwaysFalse;
    }
    const methods = ACTIONS.get(w);
    if (methods === undefined) throw new Skip(`unknown action '${w}'`);
    this.methods ??= methods;
    return (x) => (methods.has(x.method) ? T : F);
  }

  /** `@value`, then `@id`, then the object's type, as the reference PAP reads an assignee. */
  assignee(v: unknown): Rule {
    let party: string | undefined;
    if (typeof v === 'string') party = v;
    else if (isObj(v) && typeof v['@value'] === 'string') party = v['@value'];
    else if (isObj(v) && typeof v['@id'] === 'string') party = v['@id'];
    if (party === undefined && isObj(v)) {
      const type = v['@type'];
      if (type === 'odrl:Party') {
        if (typeof v['odrl:uid'] !== 'string') throw new Skip('an odrl:Party has no odrl:uid');
        party = v['odrl:uid'];
      } else if (type === 'odrl:PartyCollection') {
        return this.refinement(v, 'odrl:PartyCollection');
      } else {
        throw new Skip(`unsupported assignee${typeof type === 'string' ? ` type '${type}'` : ''}`);
      }
    }
    if (party === undefined) throw new Skip('unsupported assignee');
    if (this.term(party) === 'vc:any') return alwaysTrue;
    const expected = party;
    return (x) => {
      const issuer = issuerOf(x);
      return issuer === undefined ? U : issuer === expected ? T : F;
    };
  }

  target(v: unknown): Rule {
    let uid: string | undefined;
    if (typeof v === 'string') uid = v;
    else if (isObj(v) && typeof v['@id'] === 'string') uid = v['@id'];
    if (uid === undefined && isObj(v)) {
      const type = v['@type'];
      if (type === 'odrl:Asset') {
        if (typeof v['odrl:uid'] !== 'string') throw new Skip('an odrl:Asset has no odrl:uid');
        uid = v['odrl:uid'];
      } else if (type === 'odrl:AssetCollection') {
        return this.refinement(v, 'odrl:AssetCollection');
      } else {
        throw new Skip(`unsupported target${typeof type === 'string' ? ` type '${type}'` : ''}`);
      }
    }
    if (uid === undefined) throw new Skip('unsupported target');
    const expected = uid;
    const rule: Rule = (x) => (x.lastSegment() === expected ? T : F);
    this.guards.set(rule, { fact: Fact.LastSegment, values: [expected] });
    return rule;
  }

  refinement(collection: Obj, what: string): Rule {
    const r = collection['odrl:refinement'];
    if (r === undefined) throw new Skip(`an ${what} has no refinement`);
    return this.constraints(r);
  }

  /** A list of constraints is an andSequence; one object is a constraint or a logical constraint. */
  constraints(v: unknown): Rule {
    if (Array.isArray(v)) return this.logical('odrl:andSequence', v);
    return this.constraintOrLogical(v);
  }

  constraintOrLogical(c: unknown): Rule {
    if (!isObj(c)) throw new Skip('a constraint is not an object');
    for (const op of LOGICAL_OPERANDS) {
      if (c[op] === undefined) continue;
      const operand = c[op];
      const list = Array.isArray(operand) ? operand : isObj(operand) && Array.isArray(operand['@list']) ? operand['@list'] : null;
      if (list === null) throw new Skip(`the logical constraint ${op} holds no list`);
      return this.logical(op, list);
    }
    if (c['@type'] === 'odrl:LogicalConstraint') throw new Skip('a logical constraint has no supported operand');
    return this.constraint(c);
  }

  /** Every member is evaluated: one undefined member makes the whole undefined (seed 000 §5.7 rule 4). */
  logical(op: string, list: readonly unknown[]): Rule {
    const disjunction = op === 'odrl:or' || op === 'odrl:xone';
    if (disjunction) this.disjunctive++;
    const parts = list.map((c) => this.constraintOrLogical(c));
    if (disjunction) this.disjunctive--;
    const n = parts.length;
    if (op === 'odrl:or') {
      return (x) => {
        let any = false;
        for (let i = 0; i < n; i++) {
          const r = (parts[i] as Rule)(x);
          if (r === U) return U;
          if (r === T) any = true;
        }
        return any ? T : F;
      };
    }
    if (op === 'odrl:xone') {
      return (x) => {
        let count = 0;
        for (let i = 0; i < n; i++) {
          const r = (parts[i] as Rule)(x);
          if (r === U) return U;
          if (r === T) count++;
        }
        return count === 1 ? T : F;
      };
    }
    if (n === 1) return parts[0] as Rule;
    return (x) => {
      let all = true;
      for (let i = 0; i < n; i++) {
        const r = (parts[i] as Rule)(x);
        if (r === U) return U;
        if (r === F) all = false;
      }
      return all ? T : F;
    };
  }

  constraint(c: Obj): Rule {
    const { getter: left, word: leftWord } = this.leftOperand(c);
    const opKey = c['odrl:operator'];
    if (opKey === undefined) throw new Skip('a constraint has no operator');
    const opWord = this.word(opKey, 'the operator');
    if (!isOperator(opWord)) throw new Skip(`unknown operator '${opWord}'`);
    if (!('odrl:rightOperand' in c)) throw new Skip('a constraint has no right operand');
    const right = this.rightOperand(c['odrl:rightOperand']);
    let op;
    try {
      op = operatorFor(opWord, right.value, right.getter === null);
    } catch (e) {
      throw new Skip((e as Error).message);
    }
    let rule: Rule;
    if (right.getter === null) {
      const rv = right.value;
      rule = (x) => {
        const l = left(x);
        return l === undefined ? U : op(l, rv);
      };
    } else {
      const rget = right.getter;
      rule = (x) => {
        const l = left(x);
        if (l === undefined) return U;
        const r = rget(x);
        return r === undefined ? U : op(l, r);
      };
    }
    if (this.opts.ngsild && leftWord !== null && right.getter === null) {
      if (leftWord === 'ngsi-ld:entityType' || leftWord === 'ngsi-ld:entityTypeGroup')
        rule = this.entityTypeRule(rule, op, opWord, right.value);
      else if (leftWord === 'ngsi-ld:attribute') rule = this.attributeRule(op, right.value);
    }
    const subjectType = c['ovc:credentialSubjectType'];
    if (subjectType === undefined) {
      const values = right.getter === null ? guardValues(opWord, right.value) : null;
      if (values !== null && (leftWord === 'ngsi-ld:entityType' || leftWord === 'ngsi-ld:entityTypeGroup')) {
        this.guards.set(rule, { fact: Fact.EntityType, values });
      }
      return rule;
    }
    // seed 000 §5.6: an ovc:constraint also requires credentialSubject.type (the reference evaluates both)
    const typeRule = this.constraint({
      'odrl:leftOperand': 'ovc:credentialSubjectType',
      'odrl:operator': 'odrl:eq',
      'odrl:rightOperand': subjectType,
    });
    return this.combineAnd(rule, typeRule);
  }

  /**
   * seed 000 §5.8, `ngsi-ld:entityType` under --dsecNgsild: in the entity hook, the entity's expanded types against the
   * policy's, expanded with the default context; a positive operator holds when it holds for one type, `neq` and
   * `isNoneOf` when they hold for all. Outside it (an operation not decided entity by entity) the default reading.
   */
  entityTypeRule(requestRule: Rule, op: Operator, opWord: string, right: unknown): Rule {
    const rv = this.expandRight(right);
    const negative = opWord === 'odrl:neq' || opWord === 'odrl:isNoneOf';
    if (this.typeKeys === null && this.disjunctive === 0) {
      if ((opWord === 'odrl:eq' || opWord === 'odrl:isAllOf') && typeof rv === 'string') this.typeKeys = [rv];
      else if (MEMBERSHIP_OPERATORS.has(opWord) && Array.isArray(rv) && rv.every((v) => typeof v === 'string')) this.typeKeys = rv;
    }
    return (x) => {
      const types = x.entityTypes;
      if (types === null) return requestRule(x);
      const n = types.length;
      // §5.7 rule 4: an entity without types has no value to decide on
      if (n === 0) return U;
      let undecided = false;
      for (let i = 0; i < n; i++) {
        const r = op(types[i], rv);
        if (r === U) undecided = true;
        else if (negative ? r === F : r === T) return negative ? F : T;
      }
      return undecided ? U : negative ? T : F;
    };
  }

  /**
   * seed 000 §5.8, `ngsi-ld:attribute`: the one attribute decided, expanded, against the policy's names expanded.
   * ANY_ATTRIBUTE asks whether some attribute could make the rule true: it is (no operator holds for no name).
   */
  attributeRule(op: Operator, right: unknown): Rule {
    const rv = this.expandRight(right);
    return (x) => {
      const a = x.attribute;
      return a === undefined ? U : a === ANY_ATTRIBUTE ? T : op(a, rv);
    };
  }

  /** A constant right operand's names (a string, or the strings of a list) expanded with the default context. */
  expandRight(right: unknown): unknown {
    const expand = this.opts.expandDefault;
    if (expand === undefined) return right;
    if (typeof right === 'string') return expand(right);
    if (Array.isArray(right)) return right.map((v) => (typeof v === 'string' ? expand(v) : v));
    return right;
  }

  combineAnd(a: Rule, b: Rule): Rule {
    return (x) => {
      const ra = a(x);
      const rb = b(x);
      return ra === U || rb === U ? U : ra === T && rb === T ? T : F;
    };
  }

  /** The getter of a constraint's left operand, and its word (null for a constant). */
  leftOperand(c: Obj): { getter: Getter; word: string | null } {
    let word: string | undefined;
    let argument: unknown;
    for (const [k, v] of Object.entries(c)) {
      if (k === 'odrl:leftOperand') {
        if (typeof v === 'string') {
          word = this.term(v);
        } else if (isObj(v) && typeof v['@id'] === 'string') {
          word = v['@id'];
          argument = v['@value'];
        } else if (isObj(v) && '@value' in v) {
          const constant = v['@value'];
          return { getter: () => constant, word: null };
        } else {
          throw new Skip('unsupported left operand');
        }
        break;
      }
      if (k !== 'ovc:credentialSubjectType' && (LEFT_OPERAND_WORDS.has(k) || BROKER_WORDS.has(k))) {
        word = k;
        argument = typeof v === 'string' ? (v === k ? undefined : v) : isObj(v) ? v['@value'] : undefined;
        break;
      }
    }
    if (word === undefined) throw new Skip('a constraint has no left operand');
    if (BROKER_WORDS.has(word) && !this.opts.ngsild) {
      // seed 000 §5.8: the log line is "policy '<uid>' skipped, <this reason>"
      throw new Skip("the word is the broker's own and needs --dsecNgsild");
    }
    if (this.opts.ngsild) {
      if (word === 'ngsi-ld:attribute') this.reads |= RULE_ATTRIBUTE;
      else if (word === 'ngsi-ld:entityType' || word === 'ngsi-ld:entityTypeGroup') this.reads |= RULE_TYPE;
    }
    if (BROKER_WORDS.has(word)) return { getter: leftOperandGetter(word, undefined, this.opts.organization), word };
    if (isInertWord(word)) return { getter: () => undefined, word };
    if (!LEFT_OPERAND_WORDS.has(word)) throw new Skip(`unknown left operand '${word}'`);
    if (WORDS_WITH_ARGUMENT.has(word) && (typeof argument !== 'string' || argument === '')) {
      // seed 000 §5.7 difference 3: skipped here, refused with 400 by the policy API
      throw new Skip(`the left operand '${word}' requires a parameter`);
    }
    const slot = roleListSlot(word);
    if (slot !== null) this.roleLists |= 1 << slot;
    return { getter: leftOperandGetter(word, argument as string | undefined, this.opts.organization), word };
  }

  rightOperand(v: unknown): { value: unknown; getter: Getter | null } {
    if (typeof v === 'string') {
      const dynamic = this.dynamicRight(this.term(v));
      return dynamic === null ? { value: v, getter: null } : { value: undefined, getter: dynamic };
    }
    if (Array.isArray(v)) return { value: v.map((e) => (isObj(e) && '@value' in e ? this.typedValue(e) : e)), getter: null };
    if (isObj(v)) {
      if ('@value' in v) return { value: this.typedValue(v), getter: null };
      if (typeof v['@id'] === 'string') {
        const dynamic = this.dynamicRight(v['@id']);
        if (dynamic === null) throw new Skip(`unknown right operand '${v['@id']}'`);
        return { value: undefined, getter: dynamic };
      }
      throw new Skip('unsupported right operand');
    }
    return { value: v, getter: null };
  }

  dynamicRight(word: string): Getter | null {
    if (word === 'odrl:policyUsage') return (x) => x.now;
    if (word === 'dome-op:currentParty' || word === 'vc:currentParty') return issuerOf;
    return null;
  }

  /** seed 000 §5.6: xsd:integer and kin as a number; xsd:date as milliseconds at 00:00 UTC. */
  typedValue(o: Obj): unknown {
    const value = o['@value'];
    const type = typeof o['@type'] === 'string' ? this.term(o['@type'] as string) : undefined;
    if (type === undefined) return value;
    if (NUMERIC_TYPES.has(type)) {
      if (typeof value === 'number') return value;
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
      if (!Number.isFinite(n)) throw new Skip(`'${String(value)}' is no ${type}`);
      return n;
    }
    if (type === 'xsd:date') {
      const m = typeof value === 'string' ? DAY.exec(value) : null;
      if (m === null) throw new Skip(`the date '${String(value)}' is not valid`);
      return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
    }
    return value;
  }
}

/** Compiles one policy; `outerPrefixes` are those of an enclosing `@graph` document. */
export function compilePolicy(raw: unknown, opts: CompileOptions, outerPrefixes: PrefixMap = NO_PREFIXES): CompiledPolicy | SkippedPolicy {
  if (!isObj(raw)) return { kind: 'skipped', uid: null, reason: 'it is not a JSON object' };
  // Compiling recurses through the policy (canonical terms, logical constraints): a deeper one is skipped, not a crash.
  if (nestedDeeperThan(raw))
    return {
      kind: 'skipped',
      uid: typeof raw['odrl:uid'] === 'string' ? raw['odrl:uid'] : null,
      reason: `it is nested deeper than ${MAX_NESTING} levels`,
    };
  const prefixes = prefixesOf(raw['@context'], new Map(outerPrefixes));
  const node = canonicalNode(raw, prefixes) as Obj;
  const uid = node['odrl:uid'];
  if (typeof uid !== 'string') return { kind: 'skipped', uid: null, reason: 'it has no odrl:uid' };
  const permissions = node['odrl:permission'];
  if (permissions === undefined || (Array.isArray(permissions) && permissions.length === 0)) {
    return { kind: 'skipped', uid, reason: 'it has no permission' };
  }
  const compiler = new PolicyCompiler(opts, prefixes);
  const rules: Rule[] = [];
  try {
    for (const p of Array.isArray(permissions) ? permissions : [permissions]) compiler.permission(p, node, rules);
  } catch (e) {
    if (e instanceof Skip) return { kind: 'skipped', uid, reason: e.message };
    throw e;
  }
  const n = rules.length;
  const kinds = compiler.kinds;
  return {
    kind: 'policy',
    uid,
    methods: compiler.methods ?? NO_METHODS,
    guard: compiler.guardOf(rules),
    kinds,
    readsAttribute: kinds.some((k) => (k & RULE_ATTRIBUTE) !== 0),
    typeKeys: compiler.typeKeys,
    entityFree: kinds.every((k) => k === 0),
    requestKey: compiler.requestKey(),
    requestSlot: -1,
    holdsKinds(x: DecisionInput, select: KindSelection): boolean {
      for (let i = 0; i < n; i++) if (select[kinds[i] as number] === true && (rules[i] as Rule)(x) !== T) return false;
      return true;
    },
    allows(x: DecisionInput): boolean {
      return this.allowsFrom(x, 0);
    },
    // seed 000 §5.7 rule 3: all rules of all permissions together; the first that is not true ends the policy
    allowsFrom(x: DecisionInput, from: number): boolean {
      for (let i = from; i < n; i++) if ((rules[i] as Rule)(x) !== T) return false;
      return true;
    },
  };
}

/**
 * The strings a constant right operand lets through when the rule is true exactly for them: `eq` (and `isAllOf`,
 * deep equality too) of a string, `isAnyOf`/`anyOf` of a list of strings; null for any other rule.
 */
function guardValues(opWord: string, right: unknown): readonly string[] | null {
  if ((opWord === 'odrl:eq' || opWord === 'odrl:isAllOf') && typeof right === 'string') return [right];
  if (MEMBERSHIP_OPERATORS.has(opWord) && Array.isArray(right) && right.length > 0 && right.every((v) => typeof v === 'string')) {
    return right as string[];
  }
  return null;
}
