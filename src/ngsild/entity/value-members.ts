// The value members of each attribute type (CIM 009 v1.8 §4.5): their checks and their stored shapes, and the
// deletion marker `urn:ngsi-ld:null` as a value member (§5.6.17).
import type { ResolvedContext } from '../context/resolved.js';
import { badRequest } from '../problem.js';
import { VALUE_MEMBER, type AttrInstance, type AttrType } from './model.js';
import { checkNoProtoMember } from './proto-member.js';
import { NGSI_LD_NULL, isLanguageKey, isPlainObject, isUri, show } from './syntax.js';

/** A value member that asks for deletion (§5.6.17): `urn:ngsi-ld:null`, alone or as the only list element or language. */
export function isNullMarker(v: unknown): boolean {
  if (v === NGSI_LD_NULL) return true;
  if (Array.isArray(v)) return v.length === 1 && (v[0] === NGSI_LD_NULL || (isPlainObject(v[0]) && v[0].object === NGSI_LD_NULL));
  if (isPlainObject(v)) {
    let n = 0;
    for (const k in v) {
      if (v[k] !== NGSI_LD_NULL) return false;
      n++;
    }
    return n === 1;
  }
  return false;
}

/**
 * The NGSI-LD Null as the value member of a `type` attribute (§4.5.0): the URI, an array of it where an array is
 * required, `{"@none": null URI}` as a languageMap. Also how a deleted attribute keeps its kind in a notification.
 */
export function nullValueOf(type: AttrType): unknown {
  if (type === 'ListProperty' || type === 'ListRelationship') return [NGSI_LD_NULL];
  return type === 'LanguageProperty' ? { '@none': NGSI_LD_NULL } : NGSI_LD_NULL;
}

/** Checks `v` as the value member of a `type` attribute and sets it on `inst` (vocab expanded, objectList normalized). */
export function setValue(inst: AttrInstance, type: AttrType, v: unknown, at: string, ctx: ResolvedContext, nullable: boolean): void {
  if (v === null && nullable) {
    inst[VALUE_MEMBER[type]] = nullValueOf(type);
    return;
  }
  switch (type) {
    case 'Property':
    case 'GeoProperty':
      if (v === null || v === undefined) throw badRequest(`${at}: a ${type} value cannot be null`);
      inst.value = checkNoProtoMember(v, at);
      return;
    case 'Relationship':
      inst.object = checkObject(v, at);
      return;
    case 'LanguageProperty':
      inst.languageMap = checkLanguageMap(v, at);
      return;
    case 'VocabProperty':
      inst.vocab = expandVocab(v, at, ctx);
      return;
    case 'JsonProperty':
      if (v === null || v === undefined) throw badRequest(`${at}: a JsonProperty json member cannot be null`);
      inst.json = checkNoProtoMember(v, at);
      return;
    case 'ListProperty':
      if (!Array.isArray(v)) throw badRequest(`${at}: ${show(v)} is not an array`);
      inst.valueList = checkNoProtoMember(v, at);
      return;
    case 'ListRelationship':
      inst.objectList = checkObjectList(v, at);
      return;
  }
}

function checkObject(v: unknown, at: string): string | string[] {
  if (typeof v === 'string') {
    if (!isUri(v)) throw badRequest(`${at}: ${show(v)} is not a URI`);
    return v;
  }
  if (!Array.isArray(v) || v.length === 0) throw badRequest(`${at}: ${show(v)} is not a URI or a non-empty array of URIs`);
  for (let i = 0; i < v.length; i++) if (!isUri(v[i])) throw badRequest(`${at}[${i}]: ${show(v[i])} is not a URI`);
  return v as string[];
}

function checkObjectList(v: unknown, at: string): { object: string }[] {
  if (!Array.isArray(v)) throw badRequest(`${at}: ${show(v)} is not an array`);
  const out: { object: string }[] = new Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const el: unknown = v[i];
    const uri = isPlainObject(el) ? el.object : el;
    if (!isUri(uri)) throw badRequest(`${at}[${i}]: ${show(el)} is not a URI or an object {"object": URI}`);
    out[i] = { object: uri };
  }
  return out;
}

function checkLanguageMap(v: unknown, at: string): Record<string, string | string[]> {
  if (!isPlainObject(v)) throw badRequest(`${at}: ${show(v)} is not an object of language tags to strings`);
  let n = 0;
  for (const tag in v) {
    n++;
    if (!isLanguageKey(tag)) throw badRequest(`${at}: ${show(tag)} is not a language tag`);
    const s = v[tag];
    if (typeof s === 'string') continue;
    if (!Array.isArray(s) || s.length === 0 || s.some((x) => typeof x !== 'string'))
      throw badRequest(`${at}.${tag}: ${show(s)} is not a string or an array of strings`);
  }
  if (n === 0) throw badRequest(`${at}: the language map is empty`);
  return v as Record<string, string | string[]>;
}

function expandVocab(v: unknown, at: string, ctx: ResolvedContext): string | string[] {
  if (typeof v === 'string') {
    if (v === '') throw badRequest(`${at}: an empty string is not a vocabulary term`);
    return ctx.expandTerm(v);
  }
  if (!Array.isArray(v) || v.length === 0) throw badRequest(`${at}: ${show(v)} is not a string or a non-empty array of strings`);
  const out: string[] = new Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const t: unknown = v[i];
    if (typeof t !== 'string' || t === '') throw badRequest(`${at}[${i}]: ${show(t)} is not a vocabulary term`);
    out[i] = ctx.expandTerm(t);
  }
  return out;
}
