// Expansion and validation of entity input (CIM 009 v1.8 §4.5, §4.5.21 concise, keyValues): request bodies in any
// accepted form become the stored model (model.ts) with every name expanded, or a 400 naming the member at fault.
// Everything is checked before anything is returned, so a caller never writes half an entity.
import type { ResolvedContext } from '../context/resolved.js';
import { badRequest } from '../problem.js';
import { ATTR_TYPES, VALUE_MEMBER, type AttrInstance, type AttrMembers, type AttrType, type StoredEntity } from './model.js';
import { MAX_NESTING, tooDeepAt } from './depth.js';
import { geometryProblem, looksLikeGeometry } from './geometry.js';
import { NGSI_LD_NULL, forbiddenNameChar, isDateTime, isPlainObject, isScope, isUri, show } from './syntax.js';
import { isNullMarker, setValue } from './value-members.js';
import { checkNoProtoMember } from './proto-member.js';
import { checkIdSize, checkNameSize } from './limits.js';

const NGSI_LD = 'https://uri.etsi.org/ngsi-ld/';

/** CIM 009 §4.7: these GeoProperties are defined by the core and must be GeoProperties when present. */
export const RESERVED_GEO_IRIS: ReadonlySet<string> = new Set([
  NGSI_LD + 'location',
  NGSI_LD + 'observationSpace',
  NGSI_LD + 'operationSpace',
]);

export interface ExpandEntityOptions {
  /** The time of the request, ISO 8601: createdAt and modifiedAt of everything built. */
  now: string;
  /** Input in keyValues (simplified) form: every member is a Property value, a GeoJSON geometry a GeoProperty. */
  keyValues?: boolean;
  /**
   * Merge-patch input (§5.6.17): JSON null and `urn:ngsi-ld:null` are deletion markers, stored as the value member
   * `urn:ngsi-ld:null` (also allowed on location etc.). Always on for expandFragment, expandAttributes and
   * expandAttributeFragment, whose operations delete what is marked so. Also lets a typed instance leave out its
   * value member, which the merge keeps from the stored instance (mergeEntity refuses it on a new attribute), and
   * the entity leave out `type` (the result's `type` is then empty: no type to add).
   */
  allowNull?: boolean;
}

export interface ExpandFragmentOptions extends ExpandEntityOptions {
  /** Refuse an `id` member (bodies of /entities/{id}/attrs whose id is in the path, when the operation says so). */
  forbidId?: boolean;
}

/** An entity fragment (append, update, merge-patch bodies): attributes plus the optional id, types and scope. */
export interface EntityFragment {
  id?: string;
  /** Expanded entity types to add (append and merge-patch, CIM 009 §5.6.3, §5.6.17). */
  types?: string[];
  scope?: string[];
  attrs: Record<string, AttrInstance[]>;
}

/** A partial attribute (PATCH /entities/{id}/attrs/{attrId}, CIM 009 §5.6.4): `type` and the value member may be absent. */
export interface AttrFragment extends AttrMembers {
  type?: AttrType;
}

/** Members the system sets; a client's copy is dropped (CIM 009 §4.8: system attributes cannot be set by clients). */
const SYSTEM_MEMBERS: ReadonlySet<string> = new Set([
  'createdAt',
  'modifiedAt',
  'deletedAt',
  'instanceId',
  'previousValue',
  'previousObject',
  'previousLanguageMap',
  'previousVocab',
  'previousJson',
  'previousValueList',
  'previousObjectList',
  'lang',
  'entity',
]);

const VALUE_MEMBERS: Record<string, AttrType> = {
  value: 'Property',
  object: 'Relationship',
  languageMap: 'LanguageProperty',
  vocab: 'VocabProperty',
  json: 'JsonProperty',
  valueList: 'ListProperty',
  objectList: 'ListRelationship',
};

interface Env {
  ctx: ResolvedContext;
  now: string;
  keyValues: boolean;
  partial: boolean;
  nullable: boolean;
  /** Merge-patch: a typed instance may leave out its value member, kept from the stored instance (§5.6.17). */
  merge: boolean;
}

/**
 * Expand and validate the body of a create, replace or upsert (the caller has removed `@context`).
 * Accepts normalized and concise form, or keyValues when `opts.keyValues`.
 */
export function expandEntity(input: unknown, ctx: ResolvedContext, opts: ExpandEntityOptions): StoredEntity {
  const body = checkBody(input);
  if (!('id' in body)) throw badRequest('id: the entity id is missing');
  if (!isUri(body.id)) throw badRequest(`id: ${show(body.id)} is not a URI`);
  checkIdSize(body.id, 'id');
  const merge = opts.allowNull === true;
  let types: string[];
  if (!('type' in body)) {
    if (!merge) throw badRequest('type: the entity type is missing');
    types = [];
  } else {
    // CIM 009 §5.6.17: null in a merge-patch deletes, but an entity always has a type (§4.5.1): nothing can delete it.
    if (merge && (body.type === null || body.type === NGSI_LD_NULL))
      throw badRequest('type: the entity type cannot be deleted (null in a merge-patch)');
    types = expandTypes(body.type, 'type', ctx);
  }
  const entity: StoredEntity = { id: body.id, type: types, createdAt: opts.now, modifiedAt: opts.now };
  const env: Env = { ctx, now: opts.now, keyValues: opts.keyValues === true, partial: false, nullable: merge, merge };
  for (const key in body) {
    const raw = body[key];
    switch (key) {
      case 'id':
      case 'type':
      case '@context':
      case 'createdAt':
      case 'modifiedAt':
      case 'deletedAt':
        continue;
      case 'scope':
        entity.scope = expandScope(raw);
        continue;
      case 'expiresAt':
        if (!isDateTime(raw)) throw badRequest(`expiresAt: ${show(raw)} is not an ISO 8601 date-time`);
        entity.expiresAt = raw;
        continue;
      default: {
        const attrIri = attrIriOf(key, ctx);
        if (attrIri in entity) throw badRequest(`${key}: the attribute is given twice (as ${ctx.compactIri(attrIri)} and ${key})`);
        entity[attrIri] = expandAttributeInstances(raw, key, attrIri, env);
      }
    }
  }
  return entity;
}

/** Expand and validate an entity fragment: bodies of append (§5.6.3), update (§5.6.2) and merge-patch (§5.6.17). */
export function expandFragment(input: unknown, ctx: ResolvedContext, opts: ExpandFragmentOptions): EntityFragment {
  const body = checkBody(input);
  const fragment: EntityFragment = { attrs: {} };
  const env: Env = { ctx, now: opts.now, keyValues: opts.keyValues === true, partial: false, nullable: true, merge: false };
  for (const key in body) {
    const raw = body[key];
    switch (key) {
      case 'id':
        if (opts.forbidId === true) throw badRequest('id: an entity id is not allowed in this request body');
        if (!isUri(raw)) throw badRequest(`id: ${show(raw)} is not a URI`);
        fragment.id = checkIdSize(raw, 'id');
        continue;
      case 'type':
        fragment.types = expandTypes(raw, 'type', ctx);
        continue;
      case 'scope':
        fragment.scope = expandScope(raw);
        continue;
      case '@context':
      case 'createdAt':
      case 'modifiedAt':
      case 'deletedAt':
        continue;
      default: {
        const attrIri = attrIriOf(key, ctx);
        if (attrIri in fragment.attrs) throw badRequest(`${key}: the attribute is given twice`);
        fragment.attrs[attrIri] = expandAttributeInstances(raw, key, attrIri, env);
      }
    }
  }
  return fragment;
}

/**
 * The attributes of a fragment whose operation cannot change types or scope (update, §5.6.2):
 * `type` and `scope` members are refused here; use expandFragment where they are allowed.
 */
export function expandAttributes(input: unknown, ctx: ResolvedContext, opts: ExpandFragmentOptions): Record<string, AttrInstance[]> {
  const body = checkBody(input);
  if ('type' in body) throw badRequest('type: the entity type cannot be changed by this operation');
  if ('scope' in body) throw badRequest('scope: the entity scope cannot be changed by this operation');
  return expandFragment(body, ctx, opts).attrs;
}

/**
 * Expand and validate the body of a partial attribute update (§5.6.4) of the attribute `attrIri`: one instance
 * whose `type` and value member may be absent. Sub-attributes given are complete sub-attributes.
 */
export function expandAttributeFragment(input: unknown, ctx: ResolvedContext, opts: { now: string; attrIri?: string }): AttrFragment {
  const body = checkBody(input);
  const env: Env = { ctx, now: opts.now, keyValues: false, partial: true, nullable: true, merge: false };
  const attrIri = opts.attrIri ?? '';
  return buildInstance(body, attrIri === '' ? '(attribute)' : ctx.compactIri(attrIri), attrIri, env) as AttrFragment;
}

/**
 * One attribute of any accepted form, by its compact name: for a single instance (an object, or a concise
 * bare value) or a multi-attribute (an array of instances), the validated instances, default instance first.
 */
function expandAttributeInstances(raw: unknown, name: string, attrIri: string, env: Env): AttrInstance[] {
  if (!env.keyValues && Array.isArray(raw) && looksLikeInstances(raw)) {
    const instances: AttrInstance[] = [];
    let defaultAt = -1;
    const seen = new Set<string>();
    for (let i = 0; i < raw.length; i++) {
      const inst = buildInstance(raw[i], `${name}[${i}]`, attrIri, env) as AttrInstance;
      if (inst.datasetId === undefined) {
        if (defaultAt >= 0) throw badRequest(`${name}: more than one instance without datasetId (the default instance)`);
        defaultAt = i;
      } else {
        if (seen.has(inst.datasetId)) throw badRequest(`${name}[${i}].datasetId: ${inst.datasetId} is used by another instance`);
        seen.add(inst.datasetId);
      }
      instances.push(inst);
    }
    if (defaultAt > 0) instances.unshift(instances.splice(defaultAt, 1)[0]!);
    return instances;
  }
  return [buildInstance(raw, name, attrIri, env) as AttrInstance];
}

function checkBody(input: unknown): Record<string, unknown> {
  if (!isPlainObject(input)) throw badRequest(`body: ${Array.isArray(input) ? 'an array' : show(input)} is not a JSON object`);
  const deep = tooDeepAt(input, MAX_NESTING);
  if (deep !== undefined) throw badRequest(`${deep}: nested deeper than ${MAX_NESTING} levels`);
  return input;
}

/**
 * Names already checked and expanded, per resolved @context (equal contexts expand alike): the entities of a batch,
 * and the requests of one client, repeat the same few names, each of which cost a character scan, the expansion and
 * its size check (bench/micro/batch-upsert.ts). Only names that passed every check are kept; a context holding more
 * than NAMES_KEPT starts over, so a client sending ever new names costs memory bounded as without the cache.
 */
const NAMES_KEPT = 1024;
const attrNames = new WeakMap<ResolvedContext, Map<string, string>>();
const typeNames = new WeakMap<ResolvedContext, Map<string, string>>();

function namesOf(kept: WeakMap<ResolvedContext, Map<string, string>>, ctx: ResolvedContext): Map<string, string> {
  let names = kept.get(ctx);
  if (names === undefined) {
    names = new Map();
    kept.set(ctx, names);
  } else if (names.size >= NAMES_KEPT) names.clear();
  return names;
}

function attrIriOf(name: string, ctx: ResolvedContext): string {
  const names = namesOf(attrNames, ctx);
  const known = names.get(name);
  if (known !== undefined) return known;
  const iri = checkedAttrIri(name, ctx);
  names.set(name, iri);
  return iri;
}

function checkedAttrIri(name: string, ctx: ResolvedContext): string {
  if (name === '') throw badRequest('an attribute name is empty');
  if (name.charCodeAt(0) === 64 /* @ */) throw badRequest(`${name}: JSON-LD keywords are not allowed as attribute names`);
  const bad = forbiddenNameChar(name);
  if (bad !== undefined) throw badRequest(`${name}: the attribute name holds the forbidden character ${JSON.stringify(bad)}`);
  const iri = ctx.expandTerm(name);
  if (iri.indexOf(':') < 0) throw badRequest(`${name}: does not expand to an IRI`);
  return checkNameSize(iri, name);
}

function expandTypes(raw: unknown, at: string, ctx: ResolvedContext): string[] {
  const list = typeof raw === 'string' ? [raw] : raw;
  if (!Array.isArray(list)) throw badRequest(`${at}: ${show(raw)} is not a string or an array of strings`);
  if (list.length === 0) throw badRequest(`${at}: the array of types is empty`);
  const out: string[] = [];
  const names = namesOf(typeNames, ctx);
  for (let i = 0; i < list.length; i++) {
    const t: unknown = list[i];
    if (typeof t !== 'string') throw badRequest(`${at}: ${show(t)} is not a string`);
    let iri = names.get(t);
    if (iri === undefined) {
      iri = checkedTypeIri(t, at, ctx);
      names.set(t, iri);
    }
    if (!out.includes(iri)) out.push(iri);
  }
  return out;
}

function checkedTypeIri(t: string, at: string, ctx: ResolvedContext): string {
  if (t === '') throw badRequest(`${at}: a type name is empty`);
  const bad = forbiddenNameChar(t);
  if (bad !== undefined) throw badRequest(`${at}: ${show(t)} holds the forbidden character ${JSON.stringify(bad)}`);
  const iri = checkNameSize(ctx.expandTerm(t), at);
  // CIM 009 §5.2.4 (Entity type: a Name expanded to an IRI): a term the @context maps to a keyword (the core's
  // `type` and `id` aliases) or to no IRI names no type.
  if (iri.indexOf(':') < 0) throw badRequest(`${at}: ${show(t)} does not expand to an IRI`);
  return iri;
}

function expandScope(raw: unknown): string[] {
  const list = typeof raw === 'string' ? [raw] : raw;
  if (!Array.isArray(list) || list.length === 0) throw badRequest(`scope: ${show(raw)} is not a scope or a non-empty array of scopes`);
  const out: string[] = [];
  for (const s of list) {
    if (!isScope(s)) throw badRequest(`scope: ${show(s)} is not a scope of the form /level/level`);
    if (!out.includes(s)) out.push(s);
  }
  return out;
}

/** A JSON array at attribute level is a multi-attribute when every element is an attribute instance object. */
function looksLikeInstances(arr: unknown[]): boolean {
  if (arr.length === 0) return false;
  for (const el of arr) {
    if (!isPlainObject(el)) return false;
    const t = el.type;
    if (typeof t === 'string' && (ATTR_TYPES.has(t) || ATTR_TYPES.has(stripCore(t)))) continue;
    if (t === undefined && ('datasetId' in el || valueMemberOf(el) !== undefined)) continue;
    return false;
  }
  return true;
}

function stripCore(s: string): string {
  return s.startsWith(NGSI_LD) ? s.slice(NGSI_LD.length) : s;
}

function valueMemberOf(o: Record<string, unknown>): string | undefined {
  for (const k in VALUE_MEMBERS) if (k in o) return k;
  return undefined;
}

function stamp(inst: AttrInstance | AttrFragment, now: string): void {
  inst.createdAt = now;
  inst.modifiedAt = now;
}

/** One instance (or a sub-attribute) of any accepted form; `at` is the member path used in error details. */
function buildInstance(raw: unknown, at: string, attrIri: string, env: Env): AttrInstance | AttrFragment {
  if (env.keyValues || !isPlainObject(raw)) return fromBareValue(raw, at, attrIri, env);
  let type: AttrType | undefined;
  const declared = raw.type;
  if (declared !== undefined) {
    if (typeof declared !== 'string') throw badRequest(`${at}.type: ${show(declared)} is not an attribute type`);
    const t = stripCore(declared);
    if (ATTR_TYPES.has(t)) type = t as AttrType;
    else if (looksLikeGeometry(raw)) return fromBareValue(raw, at, attrIri, env);
    else
      throw badRequest(
        `${at}.type: ${show(declared)} is not an attribute type (Property, Relationship, GeoProperty, LanguageProperty, VocabProperty, JsonProperty, ListProperty, ListRelationship)`,
      );
  } else {
    for (const k in VALUE_MEMBERS) {
      if (!(k in raw)) continue;
      if (type !== undefined) throw badRequest(`${at}: both ${VALUE_MEMBER[type]} and ${k} are given; the attribute type is ambiguous`);
      type = VALUE_MEMBERS[k];
    }
    if (type === undefined) {
      // CIM 009 §4.5.21: an object without type and without a value member is a Property's compound value.
      if (env.partial) return buildMembers(raw, at, attrIri, env, undefined);
      return fromBareValue(raw, at, attrIri, env);
    }
    // CIM 009 §4.5.21: a concise value that is a GeoJSON geometry makes a GeoProperty.
    if (type === 'Property' && looksLikeGeometry(raw.value)) type = 'GeoProperty';
  }
  return buildMembers(raw, at, attrIri, env, type);
}

/** A concise or keyValues bare value: a GeoJSON geometry is a GeoProperty, anything else but null a Property. */
function fromBareValue(raw: unknown, at: string, attrIri: string, env: Env): AttrInstance {
  if (raw === undefined) throw badRequest(`${at}: the attribute has no value`);
  let inst: AttrInstance;
  if (env.nullable && (raw === null || raw === NGSI_LD_NULL)) {
    inst = { type: 'Property', value: NGSI_LD_NULL };
  } else if (raw === null) {
    throw badRequest(`${at}: null is not an attribute value`);
  } else if (looksLikeGeometry(raw)) {
    const p = geometryProblem(raw);
    if (p !== undefined) throw badRequest(`${at}: the GeoJSON value ${p}`);
    inst = { type: 'GeoProperty', value: checkNoProtoMember(raw, at) };
  } else {
    if (RESERVED_GEO_IRIS.has(attrIri)) throw badRequest(`${at}: must be a GeoProperty (a GeoJSON geometry)`);
    inst = { type: 'Property', value: checkNoProtoMember(raw, at) };
  }
  stamp(inst, env.now);
  return inst;
}

function buildMembers(raw: Record<string, unknown>, at: string, attrIri: string, env: Env, type: AttrType | undefined): AttrInstance {
  const inst = { type } as AttrInstance;
  const valueMember = type === undefined ? undefined : VALUE_MEMBER[type];
  for (const key in raw) {
    const v = raw[key];
    const memberAt = `${at}.${key}`;
    if (key === 'type') continue;
    // hasOwn: `in` would take inherited names (`constructor`, `__proto__`) for value members.
    if (Object.hasOwn(VALUE_MEMBERS, key)) {
      if (key !== valueMember) throw badRequest(`${memberAt}: not a member of ${type === undefined ? 'this attribute' : 'a ' + type}`);
      setValue(inst, type!, v, memberAt, env.ctx, env.nullable);
      continue;
    }
    switch (key) {
      case 'objectType':
        if (type !== 'Relationship' && type !== 'ListRelationship')
          throw badRequest(`${memberAt}: only a Relationship or ListRelationship has an objectType`);
        inst.objectType = typeof v === 'string' ? expandTypes(v, memberAt, env.ctx)[0]! : expandTypes(v, memberAt, env.ctx);
        continue;
      case 'datasetId':
        if (!isUri(v)) throw badRequest(`${memberAt}: ${show(v)} is not a URI`);
        inst.datasetId = checkIdSize(v, memberAt);
        continue;
      case 'observedAt':
        if (!isDateTime(v)) throw badRequest(`${memberAt}: ${show(v)} is not an ISO 8601 date-time`);
        inst.observedAt = v;
        continue;
      case 'unitCode':
        if (typeof v !== 'string' || v === '') throw badRequest(`${memberAt}: ${show(v)} is not a unit code string`);
        inst.unitCode = v;
        continue;
      case 'id':
        throw badRequest(`${memberAt}: id is not allowed as a sub-attribute name`);
      default:
        if (SYSTEM_MEMBERS.has(key)) continue;
        if (key.charCodeAt(0) === 64 /* @ */) throw badRequest(`${memberAt}: JSON-LD keywords are not allowed in an attribute`);
        addSubAttribute(inst, key, v, memberAt, env);
    }
  }
  const deletion = env.nullable && valueMember !== undefined && isNullMarker(inst[valueMember]);
  if (type !== undefined) {
    if (valueMember !== undefined && !(valueMember in inst) && !env.partial && !env.merge)
      throw badRequest(`${at}: a ${type} needs a ${valueMember} member`);
    if (type === 'GeoProperty' && inst.value !== undefined && !deletion) {
      const p = geometryProblem(inst.value);
      if (p !== undefined) throw badRequest(`${at}.value: the GeoJSON value ${p}`);
    }
  }
  if (RESERVED_GEO_IRIS.has(attrIri) && type !== 'GeoProperty' && !deletion && (type !== undefined || !env.partial))
    throw badRequest(`${at}: must be a GeoProperty, not a ${type ?? 'Property'}`);
  stamp(inst, env.now);
  return inst;
}

function addSubAttribute(inst: AttrInstance, key: string, v: unknown, memberAt: string, env: Env): void {
  const subIri = attrIriOf(key, env.ctx);
  if (subIri in inst) throw badRequest(`${memberAt}: the sub-attribute is given twice`);
  if (Array.isArray(v) && looksLikeInstances(v))
    throw badRequest(`${memberAt}: a sub-attribute has a single instance, not an array of instances`);
  const subEnv = env.partial ? { ...env, partial: false } : env;
  inst[subIri] = buildInstance(v, memberAt, subIri, subEnv);
}
