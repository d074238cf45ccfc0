// Rendering of stored entities (CIM 009 v1.8 §4.5 normalized, §4.5.21 concise, §4.5.4 keyValues) with names
// compacted by the request's context and the projections of §4.5.23 (pick/omit), attrs, lang and datasetId.
// The caller adds `@context`; nothing here does I/O.
import type { ResolvedContext } from '../context/resolved.js';
import { ENTITY_CORE_MEMBERS, VALUE_MEMBER, type AttrInstance, type StoredEntity } from './model.js';
import { looksLikeGeometry } from './geometry.js';
import { bestLanguage, parseLangRanges, type LanguageRange } from './lang.js';

export type EntityFormat = 'normalized' | 'concise' | 'keyValues';

export interface RenderEntityOptions {
  format: EntityFormat;
  sysAttrs?: boolean;
  /** Expanded attribute names to keep (the `attrs` parameter). */
  attrs?: ReadonlySet<string>;
  /** Compact member names to keep, `id` and `type` included (CIM 009 v1.8.1 §4.21). */
  pick?: ReadonlySet<string>;
  /** Compact member names to leave out, `id` and `type` included (§4.21); with pick, both apply. */
  omit?: ReadonlySet<string>;
  /** The `lang` parameter (§4.15). */
  lang?: string;
  /** datasetIds of the instances to keep; `@none` selects the default instance (§4.5.5). */
  datasetId?: ReadonlySet<string>;
}

/** What the per-instance renderers need, computed once per entity. */
interface Env {
  ctx: ResolvedContext;
  sysAttrs: boolean;
  ranges: readonly LanguageRange[] | undefined;
}

const SYS_MEMBERS: ReadonlySet<string> = new Set(['createdAt', 'modifiedAt', 'deletedAt']);

export function renderEntity(entity: StoredEntity, ctx: ResolvedContext, opts: RenderEntityOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  renderEntityMembers(entity, ctx, opts, out, true);
  return out;
}

/** Render into `out`; `withId` false for a GeoJSON Feature's properties (the id is the Feature's own member). */
export function renderEntityMembers(
  entity: StoredEntity,
  ctx: ResolvedContext,
  opts: RenderEntityOptions,
  out: Record<string, unknown>,
  withId: boolean,
): void {
  const pick = opts.pick;
  const omit = opts.omit;
  const env: Env = { ctx, sysAttrs: opts.sysAttrs === true, ranges: opts.lang === undefined ? undefined : parseLangRanges(opts.lang) };
  if (withId && included('id', pick, omit)) out.id = entity.id;
  if (included('type', pick, omit)) out.type = compactList(entity.type, ctx);
  if (entity.scope !== undefined && included('scope', pick, omit)) out.scope = entity.scope.length === 1 ? entity.scope[0] : entity.scope;
  if (env.sysAttrs) {
    out.createdAt = entity.createdAt;
    out.modifiedAt = entity.modifiedAt;
    if (entity.deletedAt !== undefined) out.deletedAt = entity.deletedAt;
  }
  if (entity.expiresAt !== undefined && included('expiresAt', pick, omit)) out.expiresAt = entity.expiresAt;
  const attrs = opts.attrs;
  for (const attrIri in entity) {
    if (ENTITY_CORE_MEMBERS.has(attrIri)) continue;
    if (attrs !== undefined && !attrs.has(attrIri)) continue;
    const name = ctx.compactIri(attrIri);
    if (!included(name, pick, omit)) continue;
    const rendered = renderAttributeWith(entity[attrIri] as AttrInstance[], opts.format, env, opts.datasetId);
    if (rendered !== undefined) setMember(out, name, rendered);
  }
}

/**
 * `o[name] = v` for a name a client chose (an attribute or sub-attribute, compacted): `__proto__` is a member like
 * any other, not the object's prototype, which JSON.stringify would leave out.
 */
function setMember(o: Record<string, unknown>, name: string, v: unknown): void {
  if (name === '__proto__') Object.defineProperty(o, name, { value: v, enumerable: true, writable: true, configurable: true });
  else o[name] = v;
}

function included(name: string, pick: ReadonlySet<string> | undefined, omit: ReadonlySet<string> | undefined): boolean {
  return (pick === undefined || pick.has(name)) && (omit === undefined || !omit.has(name));
}

/**
 * True when rendering `entity` with `opts` gives at least one member, without rendering it. CIM 009 v1.8.1 §4.21:
 * an entity that the projections leave empty is not found (retrieve: 404) and is left out of a query's answer.
 */
export function rendersAnything(entity: StoredEntity, ctx: ResolvedContext, opts: RenderEntityOptions): boolean {
  const pick = opts.pick;
  const omit = opts.omit;
  if (included('id', pick, omit) || included('type', pick, omit) || opts.sysAttrs === true) return true;
  if (entity.scope !== undefined && included('scope', pick, omit)) return true;
  if (entity.expiresAt !== undefined && included('expiresAt', pick, omit)) return true;
  const attrs = opts.attrs;
  for (const attrIri in entity) {
    if (ENTITY_CORE_MEMBERS.has(attrIri)) continue;
    if (attrs !== undefined && !attrs.has(attrIri)) continue;
    if (!included(ctx.compactIri(attrIri), pick, omit)) continue;
    const datasetIds = opts.datasetId;
    if (datasetIds === undefined) return true;
    for (const inst of entity[attrIri] as AttrInstance[]) if (datasetIds.has(inst.datasetId ?? '@none')) return true;
  }
  return false;
}

/**
 * One attribute in the chosen format: a single instance as an object (or concise/keyValues value), several as an
 * array (keyValues: `{dataset: {datasetId|@none: value}}`, §4.5.4). Undefined when datasetId leaves no instance.
 */
export function renderAttribute(instances: readonly AttrInstance[], ctx: ResolvedContext, opts: RenderEntityOptions): unknown {
  const env: Env = { ctx, sysAttrs: opts.sysAttrs === true, ranges: opts.lang === undefined ? undefined : parseLangRanges(opts.lang) };
  return renderAttributeWith(instances, opts.format, env, opts.datasetId);
}

function renderAttributeWith(
  instances: readonly AttrInstance[],
  format: EntityFormat,
  env: Env,
  datasetIds: ReadonlySet<string> | undefined,
): unknown {
  let selected = instances;
  if (datasetIds !== undefined) {
    selected = [];
    for (const inst of instances) {
      if (datasetIds.has(inst.datasetId ?? '@none')) (selected as AttrInstance[]).push(inst);
    }
  }
  if (selected.length === 0) return undefined;
  if (format === 'keyValues') {
    let multi = selected.length > 1;
    for (const inst of selected) if (inst.datasetId !== undefined) multi = true;
    if (!multi) return keyValueOf(selected[0]!, env);
    const dataset: Record<string, unknown> = {};
    for (const inst of selected) dataset[inst.datasetId ?? '@none'] = keyValueOf(inst, env);
    return { dataset };
  }
  const concise = format === 'concise';
  if (selected.length === 1) return concise ? conciseOf(selected[0]!, env, false) : normalizedOf(selected[0]!, env);
  const out: unknown[] = new Array(selected.length);
  for (let i = 0; i < selected.length; i++) out[i] = concise ? conciseOf(selected[i]!, env, true) : normalizedOf(selected[i]!, env);
  return out;
}

function compactList(iris: readonly string[], ctx: ResolvedContext): string | string[] {
  if (iris.length === 1) return ctx.compactIri(iris[0]!);
  const out: string[] = new Array(iris.length);
  for (let i = 0; i < iris.length; i++) out[i] = ctx.compactIri(iris[i]!);
  return out;
}

/** vocab and objectType keep their shape: a string stays a string, an array (even of one) an array. */
function compactOne(iris: string | string[], ctx: ResolvedContext): string | string[] {
  if (typeof iris === 'string') return ctx.compactIri(iris);
  const out: string[] = new Array(iris.length);
  for (let i = 0; i < iris.length; i++) out[i] = ctx.compactIri(iris[i]!);
  return out;
}

/** The chosen language of a LanguageProperty under `lang`, or undefined when `lang` is not asked. */
function chosenLanguage(inst: AttrInstance, env: Env): string | undefined {
  if (env.ranges === undefined || inst.type !== 'LanguageProperty' || inst.languageMap === undefined) return undefined;
  return bestLanguage(inst.languageMap, env.ranges);
}

function normalizedOf(inst: AttrInstance, env: Env): Record<string, unknown> {
  const o: Record<string, unknown> = { type: inst.type };
  const tag = chosenLanguage(inst, env);
  if (tag !== undefined) {
    // CIM 009 §4.15: under lang, a LanguageProperty is rendered as a Property in the chosen language.
    o.type = 'Property';
    o.value = inst.languageMap![tag];
    if (tag !== '@none') o.lang = tag;
  }
  copyMembers(inst, o, env, tag !== undefined, false);
  return o;
}

/** Every member but type into `o`: value members as stored (vocab and objectType compacted), sub-attributes compacted. */
function copyMembers(inst: AttrInstance, o: Record<string, unknown>, env: Env, skipLanguageMap: boolean, concise: boolean): void {
  for (const key in inst) {
    if (key === 'type') continue;
    const v = inst[key];
    if (v === undefined) continue;
    if (key.indexOf(':') >= 0) {
      setMember(o, env.ctx.compactIri(key), concise ? conciseOf(v as AttrInstance, env, false) : normalizedOf(v as AttrInstance, env));
      continue;
    }
    if (SYS_MEMBERS.has(key)) {
      if (env.sysAttrs) o[key] = v;
      continue;
    }
    // showChanges' previousVocab (CIM 009 §5.2.12) is a vocab like the one it was, so compacted the same way.
    if (key === 'vocab' || key === 'previousVocab' || key === 'objectType') o[key] = compactOne(v as string | string[], env.ctx);
    else if (key === 'languageMap' && skipLanguageMap) continue;
    else o[key] = v;
  }
}

/** True when an instance has nothing but its type and value member (after sysAttrs are left out). */
function onlyValue(inst: AttrInstance, env: Env): boolean {
  const valueMember = VALUE_MEMBER[inst.type];
  for (const key in inst) {
    if (key === 'type' || key === valueMember) continue;
    if (!env.sysAttrs && SYS_MEMBERS.has(key)) continue;
    if (inst[key] === undefined) continue;
    return false;
  }
  return true;
}

/** A concise Property value that would be read back as something else when given bare or without type. */
function ambiguousValue(v: unknown): 'bare' | 'typed' | undefined {
  if (looksLikeGeometry(v)) return 'typed';
  if (typeof v !== 'object' || v === null) return undefined;
  if (Array.isArray(v)) {
    for (const el of v) if (typeof el !== 'object' || el === null || Array.isArray(el)) return undefined;
    return v.length > 0 ? 'bare' : undefined;
  }
  const o = v as Record<string, unknown>;
  if (
    'type' in o ||
    'value' in o ||
    'object' in o ||
    'languageMap' in o ||
    'vocab' in o ||
    'json' in o ||
    'valueList' in o ||
    'objectList' in o
  )
    return 'bare';
  return undefined;
}

/**
 * CIM 009 §4.5.21: type left out wherever the value member implies it; a Property or GeoProperty with nothing but
 * its value is the value itself. `inArray` keeps instances of a multi-attribute as objects, so they read back as such.
 */
function conciseOf(inst: AttrInstance, env: Env, inArray: boolean): unknown {
  const tag = chosenLanguage(inst, env);
  if (tag !== undefined) {
    const o: Record<string, unknown> = { value: inst.languageMap![tag] };
    if (tag !== '@none') o.lang = tag;
    copyMembers(inst, o, env, true, true);
    return o;
  }
  const type = inst.type;
  let keepType = false;
  if (type === 'Property') {
    const a = ambiguousValue(inst.value);
    if (a === 'typed') keepType = true;
    else if (a === undefined && !inArray && onlyValue(inst, env)) return inst.value;
  } else if (type === 'GeoProperty' && !inArray && onlyValue(inst, env)) {
    return inst.value;
  }
  const o: Record<string, unknown> = keepType ? { type } : {};
  copyMembers(inst, o, env, false, true);
  return o;
}

function keyValueOf(inst: AttrInstance, env: Env): unknown {
  switch (inst.type) {
    case 'Property':
    case 'GeoProperty':
      return inst.value;
    case 'Relationship':
      return inst.object;
    case 'LanguageProperty': {
      const tag = chosenLanguage(inst, env);
      return tag === undefined ? inst.languageMap : inst.languageMap![tag];
    }
    case 'VocabProperty':
      return inst.vocab === undefined ? undefined : compactOne(inst.vocab, env.ctx);
    case 'JsonProperty':
      return inst.json;
    case 'ListProperty':
      return inst.valueList;
    case 'ListRelationship': {
      const list = inst.objectList ?? [];
      const out: unknown[] = new Array(list.length);
      for (let i = 0; i < list.length; i++) {
        const el = list[i];
        out[i] = typeof el === 'object' && el !== null ? (el as { object?: unknown }).object : el;
      }
      return out;
    }
  }
}
