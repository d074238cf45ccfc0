// An entity split across context sources, merged into one (CIM 009 v1.8.1 §4.3.6: "an Entity may be distributed
// across several Context Sources"; §5.7.1 and §5.7.2 distributed behaviour). Pure: the entities are in the stored
// model (names expanded), the caller fetched and expanded them.
import type { AttrInstance, StoredEntity } from '../entity/model.js';
import { ENTITY_CORE_MEMBERS } from '../entity/model.js';

/**
 * How the source's part weighs against what is merged already: `inclusive` keeps, per attribute instance (one per
 * datasetId), the one observed last (§4.3.6.2: when instances of both carry observedAt, the latest wins; else the
 * first one merged stays); `exclusive` and `redirect` sources hold the attributes they register (§4.3.6.3, §4.3.6.4):
 * theirs replace; `auxiliary` sources only fill in what nothing else gave (§4.3.6.5).
 */
export type MergeWeight = 'inclusive' | 'exclusive' | 'redirect' | 'auxiliary';

export interface MergeOptions {
  weight: MergeWeight;
  /** The attributes (expanded) the source may give; undefined: any. */
  only?: ReadonlySet<string>;
}

/** `into` with the source's entity `from` merged; `into` is changed in place and returned. */
export function mergeEntityInto(into: StoredEntity, from: StoredEntity, opts: MergeOptions): StoredEntity {
  for (const t of from.type) if (!into.type.includes(t)) into.type.push(t);
  if (from.scope !== undefined) into.scope = [...new Set([...(into.scope ?? []), ...from.scope])];
  for (const key in from) {
    if (ENTITY_CORE_MEMBERS.has(key)) continue;
    if (opts.only !== undefined && !opts.only.has(key)) continue;
    const theirs = from[key] as AttrInstance[];
    const ours = into[key] as AttrInstance[] | undefined;
    if (ours === undefined) {
      into[key] = theirs;
      continue;
    }
    if (opts.weight === 'exclusive' || opts.weight === 'redirect') {
      into[key] = theirs;
      continue;
    }
    if (opts.weight === 'auxiliary') continue;
    into[key] = mergeInstances(ours, theirs);
  }
  return into;
}

/** One instance per datasetId (the default one has none): a new datasetId adds, the same one keeps the later observation. */
function mergeInstances(ours: AttrInstance[], theirs: AttrInstance[]): AttrInstance[] {
  const out = [...ours];
  for (const t of theirs) {
    const i = out.findIndex((o) => o.datasetId === t.datasetId);
    if (i < 0) out.push(t);
    else if (laterObserved(t, out[i]!)) out[i] = t;
  }
  return out;
}

function laterObserved(a: AttrInstance, b: AttrInstance): boolean {
  if (typeof a.observedAt !== 'string' || typeof b.observedAt !== 'string') return false;
  return Date.parse(a.observedAt) > Date.parse(b.observedAt);
}

/** The entity keeping only the attributes in `only` (a copy); undefined when none is left. */
export function restrictEntity(e: StoredEntity, only: ReadonlySet<string>): StoredEntity {
  const out: StoredEntity = { id: e.id, type: e.type, createdAt: e.createdAt, modifiedAt: e.modifiedAt };
  if (e.scope !== undefined) out.scope = e.scope;
  for (const key in e) if (!ENTITY_CORE_MEMBERS.has(key) && only.has(key)) out[key] = e[key];
  return out;
}
