// The discovery counts (CIM 009 v1.8 §5.7.5 to §5.7.8) moved by the writes of one transaction: each count record
// is read once, changed in memory by every entity of the batch, and written once when the transaction ends.
import type { Database } from 'lmdb';
import type { AttrStat, TypeStat } from '../../../store/contract.js';
import { addToAttrStats, addToTypeStats, sameSignature, type EntitySignature } from '../../../store/kit/discovery-counts.js';

export class StatsBatch {
  /** Per tenant: the count records read or changed in this transaction, by IRI. */
  private readonly types = new Map<string, Map<string, TypeStat>>();
  private readonly attrs = new Map<string, Map<string, AttrStat>>();

  constructor(
    private readonly typeStatDb: Database<TypeStat, [string, string]>,
    private readonly attrStatDb: Database<AttrStat, [string, string]>,
  ) {}

  /** Moves one entity's contribution from its old signature to its new one (undefined: absent). */
  move(tenant: string, before: EntitySignature | undefined, after: EntitySignature | undefined): void {
    if (before !== undefined && after !== undefined && sameSignature(before, after)) return;
    const types = this.tenantMap(this.types, tenant);
    const attrs = this.tenantMap(this.attrs, tenant);
    for (const sig of [before, after]) {
      if (sig === undefined) continue;
      for (const t of sig.types)
        if (!types.has(t)) {
          const v = this.typeStatDb.get([tenant, t]);
          if (v !== undefined) types.set(t, v);
        }
      for (const [a] of sig.attrs)
        if (!attrs.has(a)) {
          const v = this.attrStatDb.get([tenant, a]);
          if (v !== undefined) attrs.set(a, v);
        }
    }
    if (before !== undefined) {
      addToTypeStats(types, before, -1);
      addToAttrStats(attrs, before, -1);
    }
    if (after !== undefined) {
      addToTypeStats(types, after, 1);
      addToAttrStats(attrs, after, 1);
    }
  }

  /** Inside the same transaction, after the last move: writes every changed record (a count of 0 removes it). */
  flush(): void {
    for (const [tenant, types] of this.types) {
      for (const [t, v] of types) {
        if (v.count <= 0) this.typeStatDb.removeSync([tenant, t]);
        else this.typeStatDb.putSync([tenant, t], v);
      }
    }
    for (const [tenant, attrs] of this.attrs) {
      for (const [a, v] of attrs) {
        if (v.count <= 0) this.attrStatDb.removeSync([tenant, a]);
        else this.attrStatDb.putSync([tenant, a], v);
      }
    }
    this.types.clear();
    this.attrs.clear();
  }

  private tenantMap<V>(outer: Map<string, Map<string, V>>, tenant: string): Map<string, V> {
    let inner = outer.get(tenant);
    if (inner === undefined) {
      inner = new Map();
      outer.set(tenant, inner);
    }
    return inner;
  }
}
