// The discovery counts (CIM 009 v1.8 §5.7.5 to §5.7.8) moved by the writes of one transaction: each count record
// is read once, changed in memory by every entity of the batch, and written once when the transaction ends.
// lmdb's batched writer runs many writes (each its own StatsBatch, in a child transaction; single writes that came
// together share one, embdb-store.ts mutateEntity) in one LMDB transaction:
// the records one of them wrote are carried to the next of the same transaction, which then reads none of them
// (3 reads and decodes of msgpack maps fewer per created entity, bench/micro/one-entity.ts).
import type { Database } from 'lmdb';
import type { AttrStat, TypeStat } from '../../../store/contract.js';
import { addToAttrStats, addToTypeStats, sameSignature, type EntitySignature } from '../../../store/kit/discovery-counts.js';

/** Count records written in one LMDB write transaction by this thread, by `tenant NUL IRI`; null: removed. */
interface Carried {
  txnId: number;
  types: Map<string, TypeStat | null>;
  attrs: Map<string, AttrStat | null>;
}

/**
 * Per store path (every handle of this thread on one environment writes in the same transactions): what the last
 * write transaction of this thread left in the count records. Nothing else can change them inside that transaction:
 * LMDB has one writer at a time, and every count write of the store goes through a StatsBatch (the index rebuild
 * writes in transactions of its own, with other ids).
 */
const carriedByPath = new Map<string, Carried>();

/** A write of the store that threw: its child transaction is undone, so what it carried may not be stored. */
export function forgetCarriedStats(path: string): void {
  carriedByPath.delete(path);
}

const recordName = (tenant: string, iri: string): string => `${tenant}\0${iri}`;

export class StatsBatch {
  /** Per tenant: the count records read or changed in this transaction, by IRI. */
  private readonly types = new Map<string, Map<string, TypeStat>>();
  private readonly attrs = new Map<string, Map<string, AttrStat>>();

  /** The tenants whose entities generation this batch's writes moved (EmbdbStore.entitiesWritten). */
  readonly tenantsWritten = new Set<string>();

  /** The records carried from earlier writes of this transaction; a record is taken out while this batch holds it. */
  private readonly carried: Carried;

  /** `txnId`: the LMDB write transaction this batch writes in (a child transaction has its parent's). */
  constructor(
    private readonly typeStatDb: Database<TypeStat, [string, string]>,
    private readonly attrStatDb: Database<AttrStat, [string, string]>,
    private readonly path: string,
    readonly txnId: number,
  ) {
    let carried = carriedByPath.get(path);
    if (carried === undefined || carried.txnId !== txnId) {
      carried = { txnId, types: new Map(), attrs: new Map() };
      carriedByPath.set(path, carried);
    }
    this.carried = carried;
  }

  /** Moves one entity's contribution from its old signature to its new one (undefined: absent). */
  move(tenant: string, before: EntitySignature | undefined, after: EntitySignature | undefined): void {
    if (before !== undefined && after !== undefined && sameSignature(before, after)) return;
    const types = this.tenantMap(this.types, tenant);
    const attrs = this.tenantMap(this.attrs, tenant);
    for (const sig of [before, after]) {
      if (sig === undefined) continue;
      for (const t of sig.types)
        if (!types.has(t)) {
          const v = take(this.carried.types, recordName(tenant, t), () => this.typeStatDb.get([tenant, t]));
          if (v !== undefined) types.set(t, v);
        }
      for (const [a] of sig.attrs)
        if (!attrs.has(a)) {
          const v = take(this.carried.attrs, recordName(tenant, a), () => this.attrStatDb.get([tenant, a]));
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
    const written: Array<() => void> = [];
    for (const [tenant, types] of this.types) {
      for (const [t, v] of types) {
        if (v.count <= 0) this.typeStatDb.removeSync([tenant, t]);
        else this.typeStatDb.putSync([tenant, t], v);
        written.push(() => this.carried.types.set(recordName(tenant, t), v.count <= 0 ? null : v));
      }
    }
    for (const [tenant, attrs] of this.attrs) {
      for (const [a, v] of attrs) {
        if (v.count <= 0) this.attrStatDb.removeSync([tenant, a]);
        else this.attrStatDb.putSync([tenant, a], v);
        written.push(() => this.carried.attrs.set(recordName(tenant, a), v.count <= 0 ? null : v));
      }
    }
    // Carried once every record is written: a write that threw half-way carries nothing (forgetCarriedStats).
    if (carriedByPath.get(this.path) === this.carried) for (const carry of written) carry();
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

/** The carried record of `name` (taken out: this batch changes it in place), else what `read` finds. */
function take<V>(carried: Map<string, V | null>, name: string, read: () => V | undefined): V | undefined {
  const v = carried.get(name);
  if (v === undefined) return read();
  carried.delete(name);
  return v === null ? undefined : v;
}
