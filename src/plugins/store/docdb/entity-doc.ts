// How docdb stores an entity: one document per entity in its tenant's `entities` collection. The entity itself is
// kept whole as JSON text (`b`), beside it the fields queries are pushed down on, derived from it at each write.
//
// Why text: an NGSI-LD entity holds expanded IRIs as member names (dots, which MongoDB paths split on) and values of
// any JSON shape, nested arrays included (every LineString and Polygon coordinate list), which FerretDB 1.x refuses
// in a document. The derived fields hold no nested arrays and no user-chosen member names, so both servers take
// them and index them; a store answers whole entities (store/contract.ts), so the text is parsed once per answer.
import { createHash } from 'node:crypto';
import type { StoredEntity, AttrInstance } from '../../../ngsild/entity/model.js';
import { ENTITY_CORE_MEMBERS } from '../../../ngsild/entity/model.js';
import { bboxOf, geometryOf } from '../../../ngsild/query/geoq.js';
import { entitySignature, type EntitySignature } from '../../../store/kit/discovery-counts.js';
import { indexedShapes, type IndexedShape } from './geo-index.js';

/** A stored entity document. */
export interface EntityDoc {
  /** The entity id. */
  _id: string;
  /**
   * The version: grows with each write of the entity (a write is conditional on the version it read), and is the
   * write's `seq` (store/contract.ts WriteEvent): max(previous + 1, the writer's clock in µs), so a re-created entity
   * counts on past the one deleted before it.
   */
  v: number;
  /** The entity as JSON text. */
  b: string;
  /** Types (expanded IRIs). */
  t: string[];
  /** Scopes, when it has any. */
  s?: string[];
  /** Attribute IRIs (attrs, and the first test of any q term). */
  a: string[];
  /** Discovery signature: `attrIri attrType` (a space between) per attribute type in use (kit/discovery-counts.ts). */
  ak: string[];
  /**
   * The scalar targets of q (CIM 009 §4.9) of each attribute, under its field key (fieldKey): Property values (and
   * their array elements), Relationship objects, VocabProperty vocabs. FerretDB 1.x matches array elements with
   * operators but has no $elemMatch on members of embedded documents, hence a field per attribute.
   */
  qv: Record<string, Array<string | number | boolean>>;
  /** Attributes with a q target qv does not hold (a JSON object, a LanguageProperty, a list, a long string). */
  qx: string[];
  /** The bounding box of the geometries of each attribute holding one, under its field key: the spatial prefilter. */
  gb: Record<string, { w: number; s: number; e: number; n: number }>;
  /**
   * The shapes of the geometries for MongoDB's 2dsphere index (geo-index.ts), only where the server is MongoDB:
   * GeoJSON polygons are nested arrays, which FerretDB 1.x refuses.
   */
  gi?: IndexedShape[];
}

const keys = new Map<string, string>();

/**
 * The field name of an attribute IRI in qv and gb: a hash (an IRI holds dots, which field paths split on). Two IRIs
 * with one key only widen the prefilter: the worker still tests every candidate of a filter that is not exact.
 */
export function fieldKey(iri: string): string {
  let k = keys.get(iri);
  if (k === undefined) {
    k = 'k' + createHash('sha1').update(iri).digest('hex').slice(0, 12);
    if (keys.size > 10_000) keys.clear();
    keys.set(iri, k);
  }
  return k;
}

/** Strings longer than this are not copied into qv (an index key stays small): they are in qx instead. */
export const QV_STRING_MAX = 256;

/**
 * Between the attribute IRI and the attribute type in `ak`: a character no IRI holds (RFC 3987) and no attribute type
 * name. Not NUL, which documents written before held: PostgreSQL's jsonb refuses \u0000 in any string, so FerretDB on
 * its PostgreSQL backend refused every entity write (issue 17).
 */
const SIG_SEP = ' ';
const OLD_SIG_SEP = '\u0000';

/**
 * The values a document copies into its fields (qv) hold no NUL, for the same reason: such a value stays in the
 * entity's JSON text (`b`, where it is escaped) and its attribute goes to qx, which the worker tests.
 */
export const hasNul = (s: string): boolean => s.includes('\u0000');

/** `geoIndex`: the server is MongoDB, which indexes the shapes of `gi` (layout.ts). */
export function entityDoc(entity: StoredEntity, version: number, geoIndex = false): EntityDoc {
  const sig = entitySignature(entity);
  const ak: string[] = [];
  for (const [attrIri, kinds] of sig.attrs) for (const k of kinds) ak.push(attrIri + SIG_SEP + k);
  const a: string[] = [];
  const qv: EntityDoc['qv'] = {};
  const qx: string[] = [];
  const gb: EntityDoc['gb'] = {};
  const gi: IndexedShape[] = [];
  for (const attrIri in entity) {
    if (ENTITY_CORE_MEMBERS.has(attrIri)) continue;
    const instances = entity[attrIri];
    if (instances === undefined) continue;
    a.push(attrIri);
    if (!Array.isArray(instances)) continue;
    const key = fieldKey(attrIri);
    const values: Array<string | number | boolean> = [];
    let complex = false;
    for (const inst of instances as AttrInstance[]) {
      if (!targetsOf(inst, (v) => values.push(v))) complex = true;
      const g = geometryOf(inst);
      if (g !== undefined) {
        const [w, s, e, n] = bboxOf(g);
        if (![w, s, e, n].every(Number.isFinite)) continue;
        if (geoIndex) gi.push(...indexedShapes(key, g));
        const box = gb[key];
        gb[key] =
          box === undefined
            ? { w, s, e, n }
            : { w: Math.min(w, box.w), s: Math.min(s, box.s), e: Math.max(e, box.e), n: Math.max(n, box.n) };
      }
    }
    if (values.length > 0) qv[key] = values;
    if (complex) qx.push(attrIri);
  }
  const doc: EntityDoc = { _id: entity.id, v: version, b: JSON.stringify(entity), t: [...entity.type], a, ak, qv, qx, gb };
  if (entity.scope !== undefined && entity.scope.length > 0) doc.s = [...entity.scope];
  if (gi.length > 0) doc.gi = gi;
  return doc;
}

export function entityOfDoc(doc: Pick<EntityDoc, 'b'>): StoredEntity {
  return JSON.parse(doc.b) as StoredEntity;
}

/** The discovery signature a document keeps (entitySignature of its entity). */
export function signatureOfDoc(doc: Pick<EntityDoc, 't' | 'ak'>): EntitySignature {
  const attrs = new Map<string, string[]>();
  for (const entry of doc.ak) {
    const at = entry.includes(OLD_SIG_SEP) ? entry.lastIndexOf(OLD_SIG_SEP) : entry.lastIndexOf(SIG_SEP);
    const iri = entry.slice(0, at);
    let kinds = attrs.get(iri);
    if (kinds === undefined) attrs.set(iri, (kinds = []));
    kinds.push(entry.slice(at + 1));
  }
  return { types: doc.t, attrs: [...attrs] };
}

type Scalar = string | number | boolean;

const isScalar = (x: unknown): x is Scalar =>
  typeof x === 'number' || typeof x === 'boolean' || (typeof x === 'string' && x.length <= QV_STRING_MAX && !hasNul(x));

/**
 * The q targets of one instance without a compound path (q-eval.ts visitInstance) handed to `put`; false when it
 * has one that is not a short scalar (then the attribute goes to qx, and a pushed-down comparison lets it through).
 */
function targetsOf(inst: AttrInstance, put: (v: Scalar) => void): boolean {
  if (typeof inst !== 'object' || inst === null) return true;
  switch (inst.type) {
    case 'Relationship':
      return scalars(inst.object, put);
    case 'ListRelationship': {
      if (!Array.isArray(inst.objectList)) return true;
      return scalars(
        inst.objectList.map((o) => (typeof o === 'object' && o !== null && !Array.isArray(o) ? (o as { object?: unknown }).object : o)),
        put,
      );
    }
    case 'VocabProperty':
      return scalars(inst.vocab, put);
    case 'LanguageProperty':
    case 'JsonProperty':
    case 'ListProperty':
      return false;
    default: {
      let v = inst.value;
      if (typeof v === 'object' && v !== null && !Array.isArray(v) && '@value' in v) v = (v as { '@value': unknown })['@value'];
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) return false;
      return scalars(v, put);
    }
  }
}

function scalars(v: unknown, put: (v: Scalar) => void): boolean {
  if (v === undefined || v === null) return v === undefined;
  if (Array.isArray(v)) {
    let all = true;
    for (const x of v) {
      if (isScalar(x)) put(x);
      else all = false;
    }
    return all;
  }
  if (isScalar(v)) {
    put(v);
    return true;
  }
  return false;
}
