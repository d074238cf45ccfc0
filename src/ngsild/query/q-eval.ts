// Evaluation of a parsed `q` (CIM 009 v1.8 §4.9) over stored entities: compiled once per request into closures,
// so matching an entity walks only the attributes the query names.

import type { AttrInstance, StoredEntity } from '../entity/model.js';
import { invalidRequest } from '../problem.js';
import {
  dateMs,
  dateTimeMs,
  timeMs,
  type QCompare,
  type QLiteral,
  type QMatch,
  type QNode,
  type QPath,
  type QUri,
  type QValue,
} from './q-ast.js';
import { compileRe2 } from './re2.js';

export type QPredicate = (entity: StoredEntity) => boolean;
type Expand = (term: string) => string;

const NGSI_LD = 'https://uri.etsi.org/ngsi-ld/';

// Members of an attribute instance that a path may address after a dot (§4.9 example 8: temperature.observedAt).
// Core terms cannot be redefined by a user @context, so the term as written and its expansion both identify them.
const INSTANCE_MEMBERS = ['observedAt', 'unitCode', 'datasetId', 'createdAt', 'modifiedAt'];
const MEMBER_BY_NAME: ReadonlyMap<string, string> = new Map(
  INSTANCE_MEMBERS.flatMap(
    (m) =>
      [
        [m, m],
        [NGSI_LD + m, m],
      ] as [string, string][],
  ),
);

/**
 * The IRI of a path step after the first (a sub-attribute, or an instance member such as observedAt): the member's
 * core IRI when the name as written or its expansion names one, else the expansion. Evaluating that IRI addresses
 * what evaluating the name with `expand` does (q-resolve.ts).
 */
export function stepIri(name: string, expand: Expand): string {
  const iri = expand(name);
  const member = MEMBER_BY_NAME.get(name) ?? MEMBER_BY_NAME.get(iri);
  return member === undefined ? iri : NGSI_LD + member;
}
// Entity members a one-name path may address (`q=modifiedAt>2024-01-01T00:00:00Z`): an extension of §4.9, whose
// paths start at an attribute; these names can never be attributes (§4.5.1), so nothing is shadowed.
const ENTITY_MEMBERS: ReadonlyMap<string, 'createdAt' | 'modifiedAt'> = new Map([
  [NGSI_LD + 'createdAt', 'createdAt'],
  [NGSI_LD + 'modifiedAt', 'modifiedAt'],
]);

// What a target value is, for the comparison rules of §4.9.
const VALUE = 0; // a Property's value (also GeoProperty, JsonProperty, ListProperty, LanguageProperty strings, members)
const OBJECT = 1; // a Relationship's object(s), a ListRelationship's objects: only == and != apply
const VOCAB = 2; // a VocabProperty's vocab: expanded IRIs, compared with the query value expanded the same way
type Category = typeof VALUE | typeof OBJECT | typeof VOCAB;

/** Called with each target of a path; returning true stops the walk (the entity matches). */
type Visit = (target: unknown, category: Category) => boolean;
type Resolver = (entity: StoredEntity, visit: Visit) => boolean;

/**
 * Compiles a `q` tree into a predicate. `expand` maps the request's terms to IRIs (its @context). Throws
 * InvalidRequest when a pattern is not valid RE2 (parseQ already refuses those; trees may come from elsewhere).
 */
export function compileQ(ast: QNode, expand: Expand, expandValues?: ReadonlySet<string>): QPredicate {
  switch (ast.kind) {
    case 'and': {
      const fs = ast.terms.map((n) => compileQ(n, expand, expandValues));
      if (fs.length === 2) {
        const [f, g] = fs as [QPredicate, QPredicate];
        return (e) => f(e) && g(e);
      }
      return (e) => {
        for (const f of fs) if (!f(e)) return false;
        return true;
      };
    }
    case 'or': {
      const fs = ast.terms.map((n) => compileQ(n, expand, expandValues));
      if (fs.length === 2) {
        const [f, g] = fs as [QPredicate, QPredicate];
        return (e) => f(e) || g(e);
      }
      return (e) => {
        for (const f of fs) if (f(e)) return true;
        return false;
      };
    }
    case 'exists': {
      const resolve = compilePath(ast.path, expand);
      return (e) => resolve(e, found);
    }
    case 'notExists': {
      const resolve = compilePath(ast.path, expand);
      return (e) => !resolve(e, found);
    }
    case 'compare': {
      const resolve = compilePath(ast.path, expand);
      const visit = compileComparison(ast, expand);
      if ((ast.vocab === true || (expandValues !== undefined && expandValues.has(expand(ast.path.attr[0]!)))) && stringsOnly(ast.value)) {
        // CIM 009 v1.8 table 6.4.3.2-1, expandValues: the attribute's values hold IRIs, so the query's strings are compared
        // as the terms they are too (expanded with the @context), as for a VocabProperty.
        const asVocab: Visit = (t, c) => visit(t, c === VALUE ? VOCAB : c);
        return (e) => resolve(e, asVocab);
      }
      return (e) => resolve(e, visit);
    }
    case 'match': {
      const resolve = compilePath(ast.path, expand);
      const visit = compileMatch(ast);
      return (e) => resolve(e, visit);
    }
  }
}

/** True when a comparison value is strings (or URIs) only: the values expandValues may expand. */
function stringsOnly(v: QValue): boolean {
  if (v.kind === 'list') return v.items.every((i) => i.kind === 'string' || i.kind === 'uri');
  return v.kind === 'string' || v.kind === 'uri';
}

/** The attribute terms a `q` names (first name of every path, as written, each once, in order of appearance). */
export function attributesOf(ast: QNode): string[] {
  const names = new Set<string>();
  const walk = (n: QNode): void => {
    if (n.kind === 'and' || n.kind === 'or') n.terms.forEach(walk);
    else names.add(n.path.attr[0]!);
  };
  walk(ast);
  return [...names];
}

const found: Visit = () => true;

/**
 * The first target of `path` in an entity (in stored instance order), undefined when it has none: what orderBy
 * sorts on (CIM 009 v1.9.1 §4.23 names its keys with the attribute paths of §4.9).
 */
export function compilePathValue(path: QPath, expand: Expand): (entity: StoredEntity) => unknown {
  const resolve = compilePath(path, expand);
  return (entity) => {
    let first: unknown;
    resolve(entity, (target) => {
      first = target;
      return true;
    });
    return first;
  };
}

// ---- paths ---------------------------------------------------------------------------------------------------

interface Step {
  /** Expanded sub-attribute IRI, or undefined when the step is an instance member. */
  iri: string | undefined;
  member: string | undefined;
}

function compilePath(path: QPath, expand: Expand): Resolver {
  const attrIri = expand(path.attr[0]!);
  const compound = path.compound;
  const entityMember = ENTITY_MEMBERS.get(attrIri);
  if (entityMember !== undefined && path.attr.length === 1) {
    return (e, visit) => {
      const v = e[entityMember];
      return v !== undefined && visitCompound(v, compound, visit);
    };
  }
  const steps: Step[] = path.attr.slice(1).map((name) => {
    const iri = expand(name);
    const member = MEMBER_BY_NAME.get(name) ?? MEMBER_BY_NAME.get(iri);
    return member === undefined ? { iri, member: undefined } : { iri: undefined, member };
  });
  // A member (observedAt, …) has no sub-attributes: a path going past one addresses nothing.
  if (steps.some((s, i) => s.member !== undefined && i < steps.length - 1)) return () => false;

  const walk = (inst: AttrInstance, i: number, visit: Visit): boolean => {
    if (i === steps.length) return visitInstance(inst, compound, visit);
    const step = steps[i]!;
    if (step.member !== undefined) {
      const v = inst[step.member];
      return v !== undefined && visitCompound(v, compound, visit);
    }
    const sub = inst[step.iri!];
    if (Array.isArray(sub)) {
      for (const s of sub) if (isInstance(s) && walk(s, i + 1, visit)) return true;
      return false;
    }
    return isInstance(sub) && walk(sub, i + 1, visit);
  };

  return (e, visit) => {
    const instances = e[attrIri];
    if (!Array.isArray(instances)) return false;
    for (const inst of instances) if (isInstance(inst) && walk(inst, 0, visit)) return true;
    return false;
  };
}

function isInstance(x: unknown): x is AttrInstance {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

// The target of an instance (§4.9 "target value" / "target object"), then the compound member path into it.
function visitInstance(inst: AttrInstance, compound: readonly string[], visit: Visit): boolean {
  switch (inst.type) {
    case 'Relationship':
      return compound.length === 0 && inst.object !== undefined && visit(inst.object, OBJECT);
    case 'ListRelationship': {
      if (compound.length !== 0 || !Array.isArray(inst.objectList)) return false;
      return visit(
        inst.objectList.map((o) => (isInstance(o) ? o.object : o)),
        OBJECT,
      );
    }
    case 'VocabProperty':
      return compound.length === 0 && inst.vocab !== undefined && visit(inst.vocab, VOCAB);
    case 'LanguageProperty':
      return visitLanguageMap(inst.languageMap, compound, visit);
    case 'JsonProperty':
      return inst.json !== undefined && visitCompound(inst.json, compound, visit);
    case 'ListProperty':
      return Array.isArray(inst.valueList) && visitCompound(inst.valueList, compound, visit);
    default:
      return inst.value !== undefined && visitCompound(unwrapValue(inst.value), compound, visit);
  }
}

// §4.9: without a language (or with `*`) the target is every value of the languageMap; with `[tag]` the values
// of that language. Passed as one array so that `!=` means "none of them", as the clause's examples require.
function visitLanguageMap(map: AttrInstance['languageMap'], compound: readonly string[], visit: Visit): boolean {
  if (map === undefined || compound.length > 1) return false;
  const values: unknown[] = [];
  if (compound.length === 0 || compound[0] === '*') {
    for (const k in map) pushAll(values, map[k]);
  } else {
    if (!Object.hasOwn(map, compound[0]!)) return false;
    pushAll(values, map[compound[0]!]);
  }
  return values.length > 0 && visit(values, VALUE);
}

function pushAll(out: unknown[], v: unknown): void {
  if (Array.isArray(v)) out.push(...(v as unknown[]));
  else if (v !== undefined) out.push(v);
}

// A value stored as a JSON-LD value object ({"@type": "DateTime", "@value": "…"}) compares as its @value.
function unwrapValue(v: unknown): unknown {
  return isInstance(v) && '@value' in v ? v['@value'] : v;
}

// §4.9: a trailing path is evaluated as an ECMAScript MemberExpression; an undefined result is a missing target.
function visitCompound(v: unknown, compound: readonly string[], visit: Visit): boolean {
  let cur = v;
  for (const member of compound) {
    if (typeof cur !== 'object' || cur === null || !Object.hasOwn(cur, member)) return false;
    cur = (cur as Record<string, unknown>)[member];
  }
  return cur !== undefined && visit(cur, VALUE);
}

// ---- comparisons ---------------------------------------------------------------------------------------------

/** A literal prepared once: its kind and the one field its comparisons read. */
interface Prepared {
  kind: QLiteral['kind'] | 'uri';
  num: number;
  str: string;
  /** The string expanded as a vocab term (VocabProperty targets). */
  vocabIri: string;
  bool: boolean;
}

function prepare(lit: QLiteral | QUri, expand: Expand): Prepared {
  const p: Prepared = { kind: lit.kind, num: NaN, str: '', vocabIri: '', bool: false };
  switch (lit.kind) {
    case 'number':
      p.num = lit.value;
      break;
    case 'boolean':
      p.bool = lit.value;
      break;
    case 'string':
    case 'uri':
      p.str = lit.value;
      p.vocabIri = lit.expanded ?? expand(lit.value);
      break;
    case 'dateTime':
      p.num = dateTimeMs(lit.value);
      break;
    case 'date':
      p.num = dateMs(lit.value);
      break;
    case 'time':
      p.num = timeMs(lit.value);
      break;
  }
  return p;
}

// Chronological value of a stored string for a temporal literal; NaN when it is no such string. A date and a
// dateTime compare with each other (a date is its 00:00 UTC); a time only with a time.
function temporalMs(kind: Prepared['kind'], t: unknown): number {
  if (typeof t !== 'string') return NaN;
  if (kind === 'time') return timeMs(t);
  const ms = dateTimeMs(t);
  return Number.isNaN(ms) ? dateMs(t) : ms;
}

// §4.9: "If there is no equality between the target value data type and the Query Term value data type, then it
// shall be considered as not matching" — every comparison below answers false (or NaN) across types.
function equalsOne(t: unknown, p: Prepared, category: Category): boolean {
  if (category === OBJECT) return (p.kind === 'string' || p.kind === 'uri') && t === p.str;
  if (category === VOCAB) return (p.kind === 'string' || p.kind === 'uri') && (t === p.vocabIri || t === p.str);
  switch (p.kind) {
    case 'number':
      return t === p.num;
    case 'boolean':
      return t === p.bool;
    case 'string':
    case 'uri':
      return t === p.str;
    default:
      return temporalMs(p.kind, t) === p.num;
  }
}

/** Order of a target against a comparable literal: <0, 0, >0, or NaN when they do not compare. */
function order(t: unknown, p: Prepared, category: Category): number {
  if (category !== VALUE) return NaN; // §4.9: a Relationship with an ordering operator does not match
  switch (p.kind) {
    case 'number':
      return typeof t === 'number' ? t - p.num : NaN;
    case 'string':
      // RFC 8259 §8.3: strings compare code unit by code unit.
      return typeof t === 'string' ? (t < p.str ? -1 : t > p.str ? 1 : 0) : NaN;
    case 'dateTime':
    case 'date':
    case 'time':
      return temporalMs(p.kind, t) - p.num;
    default:
      return NaN;
  }
}

type Test = (x: unknown, category: Category) => boolean;

// §4.9: a query value "is included in the target value, if the latter is an array": a test holds when it holds
// for the target or for any element of an array target. (Tests are built once; nothing is allocated per call.)
function someElement(t: unknown, c: Category, test: Test): boolean {
  if (!Array.isArray(t)) return test(t, c);
  for (const x of t) if (test(x, c)) return true;
  return false;
}

function compileComparison(node: QCompare, expand: Expand): Visit {
  const v = node.value;
  const test = equalityTest(v, expand);
  switch (node.op) {
    case '==':
      return (t, c) => someElement(t, c, test);
    case '!=':
      return (t, c) => !someElement(t, c, test);
  }
  if (v.kind === 'list' || v.kind === 'range' || v.kind === 'uri' || v.kind === 'boolean') {
    throw invalidRequest(`q: ${node.op} needs a number, string, date, time or dateTime`);
  }
  const ordered = orderingTest(node.op, prepare(v, expand));
  return (t, c) => someElement(t, c, ordered);
}

function equalityTest(v: QValue, expand: Expand): Test {
  if (v.kind === 'list') {
    const items = v.items.map((i) => prepare(i, expand));
    return (x, c) => {
      for (const p of items) if (equalsOne(x, p, c)) return true;
      return false;
    };
  }
  if (v.kind === 'range') {
    const min = prepare(v.min, expand);
    const max = prepare(v.max, expand);
    return (x, c) => order(x, min, c) >= 0 && order(x, max, c) <= 0;
  }
  const p = prepare(v, expand);
  return (x, c) => equalsOne(x, p, c);
}

function orderingTest(op: '>' | '>=' | '<' | '<=', p: Prepared): Test {
  switch (op) {
    case '>':
      return (x, c) => order(x, p, c) > 0;
    case '>=':
      return (x, c) => order(x, p, c) >= 0;
    case '<':
      return (x, c) => order(x, p, c) < 0;
    case '<=':
      return (x, c) => order(x, p, c) <= 0;
  }
}

// §4.9: a pattern applies to String targets only; anything else does not match, for ~= and for !~= alike.
function compileMatch(node: QMatch): Visit {
  const re = compileRe2(node.pattern);
  if (typeof re === 'string') throw invalidRequest(`q: invalid regular expression (${re})`);
  if (!node.negated) {
    const test: Test = (x) => typeof x === 'string' && re.test(x);
    return (t, c) => c !== OBJECT && someElement(t, c, test);
  }
  return (t, c) => {
    if (c === OBJECT) return false;
    if (typeof t === 'string') return !re.test(t);
    if (!Array.isArray(t)) return false;
    let strings = 0;
    for (const x of t) {
      if (typeof x !== 'string') continue;
      if (re.test(x)) return false;
      strings++;
    }
    return strings > 0;
  };
}

// ---- value index support ----------------------------------------------------------------------------------------

/**
 * The numbers an attribute's instances hold for a comparison with a number literal, pushed on `into`: each target
 * value of §4.9 (as visitInstance finds them) that is a number, and each number element of one that is an array. An
 * entity matches `attr>=n` (or `==`, `<`, a range of numbers) exactly when one of these does, so an index of them finds
 * every candidate. -0 is pushed as 0 (`===` holds them equal; an index's bytes would not).
 */
export function comparableNumbers(instances: unknown, into: number[]): void {
  if (!Array.isArray(instances)) return;
  const collect: Visit = (t, category) => {
    if (category !== VALUE) return false;
    if (typeof t === 'number') into.push(t === 0 ? 0 : t);
    else if (Array.isArray(t)) for (const x of t) if (typeof x === 'number') into.push(x === 0 ? 0 : x);
    return false;
  };
  for (const inst of instances) if (isInstance(inst)) visitInstance(inst, NO_COMPOUND, collect);
}

const NO_COMPOUND: readonly string[] = [];

/**
 * An interval of numbers one attribute must hold a value in for an entity to match a resolved `q` (names expanded):
 * a comparison of a one-name path (an attribute, not an entity member, no compound part) with a number, or a range of
 * numbers, alone or in an AND (the first such term). undefined when the `q` asks no such thing (OR, !=, strings, ...).
 * A value index narrows a query with it; the compiled `q` still decides on every candidate.
 */
export interface QNumberRange {
  attrIri: string;
  /** -Infinity when unbounded. */
  min: number;
  minOpen: boolean;
  /** Infinity when unbounded. */
  max: number;
  maxOpen: boolean;
}

export function numberRangeOf(ast: QNode): QNumberRange | undefined {
  if (ast.kind === 'and') {
    for (const term of ast.terms) {
      const r = numberRangeOf(term);
      if (r !== undefined) return r;
    }
    return undefined;
  }
  if (ast.kind !== 'compare' || ast.path.attr.length !== 1 || ast.path.compound.length !== 0) return undefined;
  const attrIri = ast.path.attr[0]!;
  if (ENTITY_MEMBERS.has(attrIri)) return undefined;
  const v = ast.value;
  const zeroed = (n: number): number => (n === 0 ? 0 : n);
  if (v.kind === 'range') {
    if (ast.op !== '==' || v.min.kind !== 'number' || v.max.kind !== 'number') return undefined;
    return { attrIri, min: zeroed(v.min.value), minOpen: false, max: zeroed(v.max.value), maxOpen: false };
  }
  if (v.kind !== 'number') return undefined;
  const n = zeroed(v.value);
  switch (ast.op) {
    case '==':
      return { attrIri, min: n, minOpen: false, max: n, maxOpen: false };
    case '>':
    case '>=':
      return { attrIri, min: n, minOpen: ast.op === '>', max: Infinity, maxOpen: false };
    case '<':
    case '<=':
      return { attrIri, min: -Infinity, minOpen: false, max: n, maxOpen: ast.op === '<' };
    default:
      return undefined;
  }
}
