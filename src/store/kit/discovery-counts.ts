// Discovery counts (CIM 009 v1.8 §5.7.5 to §5.7.8) as arithmetic a store can keep in its own write transactions:
// what one entity contributes (its signature), and adding or removing that contribution. Part of the store kit.
import { type StoredEntity } from '../../ngsild/entity/model.js';
import type { AttrStat, TypeStat } from '../contract.js';

/**
 * What one entity contributes to the discovery counts: its types and, per attribute, the attribute types of its
 * instances. Two entities with equal signatures contribute equally, so a write that keeps it changes no count.
 */
export interface EntitySignature {
  types: readonly string[];
  attrs: Array<readonly [attrIri: string, attrTypes: readonly string[]]>;
}

export function entitySignature(entity: StoredEntity): EntitySignature {
  const attrs: Array<readonly [string, readonly string[]]> = [];
  for (const key in entity) {
    if (!key.includes(':') || key === 'id' || ENTITY_MEMBER_KEYS.has(key)) continue;
    const instances = entity[key];
    if (!Array.isArray(instances)) continue;
    const kinds: string[] = [];
    for (const inst of instances) {
      const kind = (inst as { type?: unknown }).type;
      if (typeof kind === 'string' && !kinds.includes(kind)) kinds.push(kind);
    }
    attrs.push([key, kinds.sort()]);
  }
  attrs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return { types: entity.type, attrs };
}

/**
 * Whether two entities contribute equally to the counts, without building their signatures: the same types in the
 * same order, the same attributes, each with instances of the same types in the same order. A replace or upsert of
 * an entity by one of its shape (the usual case) then moves no count and allocates nothing (no key arrays: issue 24);
 * false is no more than "compare the signatures" (instances in another order contribute alike).
 */
export function sameContribution(a: StoredEntity, b: StoredEntity): boolean {
  const ta = a.type;
  const tb = b.type;
  if (ta.length !== tb.length) return false;
  for (let i = 0; i < ta.length; i++) if (ta[i] !== tb[i]) return false;
  // Every attribute of a is one of b with the same instance types; then b has no other when it has as many.
  let attrs = 0;
  for (const key in a) {
    if (!isAttrKey(key, a)) continue;
    if (!isAttrKey(key, b)) return false;
    const x = a[key] as Array<{ type?: unknown }>;
    const y = b[key] as Array<{ type?: unknown }>;
    if (x.length !== y.length) return false;
    for (let n = 0; n < x.length; n++) if (x[n]!.type !== y[n]!.type) return false;
    attrs++;
  }
  for (const key in b) if (isAttrKey(key, b) && --attrs < 0) return false;
  return attrs === 0;
}

/** A member entitySignature counts: an attribute (an expanded name holding its instances). */
function isAttrKey(key: string, entity: StoredEntity): boolean {
  return key.includes(':') && !ENTITY_MEMBER_KEYS.has(key) && Array.isArray(entity[key]);
}

export function sameSignature(a: EntitySignature, b: EntitySignature): boolean {
  if (a.types.length !== b.types.length || a.attrs.length !== b.attrs.length) return false;
  for (let i = 0; i < a.types.length; i++) if (a.types[i] !== b.types[i]) return false;
  for (let i = 0; i < a.attrs.length; i++) {
    const x = a.attrs[i]!;
    const y = b.attrs[i]!;
    if (x[0] !== y[0] || x[1].length !== y[1].length || x[1].some((k, j) => k !== y[1][j])) return false;
  }
  return true;
}

const ENTITY_MEMBER_KEYS: ReadonlySet<string> = new Set(['id', 'type', 'scope', 'createdAt', 'modifiedAt', 'deletedAt', 'expiresAt']);

/** Adds (sign 1) or removes (sign -1) an entity's contribution to type counts kept in `types` (absent: created). */
export function addToTypeStats(types: Map<string, TypeStat>, sig: EntitySignature, sign: 1 | -1): void {
  for (const typeIri of sig.types) {
    let stat = types.get(typeIri);
    if (stat === undefined) {
      stat = { typeIri, count: 0, attrs: {} };
      types.set(typeIri, stat);
    }
    stat.count += sign;
    for (const [attrIri, kinds] of sig.attrs) {
      const use = (stat.attrs[attrIri] ??= { n: 0, t: {} });
      use.n += sign;
      for (const k of kinds) {
        use.t[k] = (use.t[k] ?? 0) + sign;
        if (use.t[k] === 0) delete use.t[k];
      }
      if (use.n <= 0) delete stat.attrs[attrIri];
    }
  }
}

/** Adds (sign 1) or removes (sign -1) an entity's contribution to attribute counts kept in `attrs`. */
export function addToAttrStats(attrs: Map<string, AttrStat>, sig: EntitySignature, sign: 1 | -1): void {
  for (const [attrIri, kinds] of sig.attrs) {
    let stat = attrs.get(attrIri);
    if (stat === undefined) {
      stat = { attrIri, count: 0, attrTypes: {}, typeIris: {} };
      attrs.set(attrIri, stat);
    }
    stat.count += sign;
    for (const k of kinds) {
      stat.attrTypes[k] = (stat.attrTypes[k] ?? 0) + sign;
      if (stat.attrTypes[k] === 0) delete stat.attrTypes[k];
    }
    for (const t of sig.types) {
      stat.typeIris[t] = (stat.typeIris[t] ?? 0) + sign;
      if (stat.typeIris[t] === 0) delete stat.typeIris[t];
    }
  }
}
