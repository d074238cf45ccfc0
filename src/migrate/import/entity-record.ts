// An `entity` record as a live create writes it (seed 001, importer behaviour 3): the system timestamps taken out,
// the entity expanded, normalised, checked and converted to the stored model by the code of POST /entities
// (ngsild/entity/expand.ts), then the timestamps put back at every level (behaviour 6: a level without its own takes
// the level above's).
import type { ResolvedContext } from '../../ngsild/context/resolved.js';
import { expandEntity } from '../../ngsild/entity/expand.js';
import { ATTR_CORE_MEMBERS, ENTITY_CORE_MEMBERS, type AttrInstance, type StoredEntity } from '../../ngsild/entity/model.js';
import { isDateTime, isPlainObject, show } from '../../ngsild/entity/syntax.js';
import { badRequest } from '../../ngsild/problem.js';

const SYSTEM = new Set(['createdAt', 'modifiedAt', 'deletedAt', 'instanceId']);

/** The stored entity of an entity record's data; an LdError names what is wrong. */
export function storedEntityOf(data: Record<string, unknown>, ctx: ResolvedContext): StoredEntity {
  const createdAt = timeOf(data.createdAt, 'createdAt', undefined);
  const modifiedAt = timeOf(data.modifiedAt, 'modifiedAt', createdAt);
  const entity = expandEntity(withoutSystem(data) as Record<string, unknown>, ctx, { now: createdAt });
  entity.createdAt = createdAt;
  entity.modifiedAt = modifiedAt;
  restoreAttributes(entity, data, ctx, createdAt, modifiedAt, '');
  return entity;
}

/**
 * An attribute instance of a history record as a live write stores it: expanded and checked as the attribute of an
 * entity, with the record's times put back. `attrIri` is the record's attribute name.
 */
export function storedInstanceOf(
  entityId: string,
  attrIri: string,
  instance: Record<string, unknown>,
  ctx: ResolvedContext,
): AttrInstance & { createdAt: string; modifiedAt: string } {
  const createdAt = timeOf(instance.createdAt, 'instance.createdAt', undefined);
  const modifiedAt = timeOf(instance.modifiedAt, 'instance.modifiedAt', createdAt);
  const entity = expandEntity({ id: entityId, type: 'urn:x', [attrIri]: withoutSystem(instance) }, ctx, { now: createdAt });
  const stored = (entity[ctx.expandTerm(attrIri)] as AttrInstance[])[0]!;
  restoreInstance(stored, instance, ctx, createdAt, modifiedAt, 'instance');
  return stored as AttrInstance & { createdAt: string; modifiedAt: string };
}

function timeOf(v: unknown, at: string, above: string | undefined): string {
  if (v === undefined && above !== undefined) return above;
  if (!isDateTime(v)) throw badRequest(`${at}: ${v === undefined ? 'missing' : `${show(v)} is not an ISO 8601 date-time`}`);
  return v;
}

/** A deep copy without the system members, whose values the expander would drop anyway (and check nothing of). */
function withoutSystem(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutSystem);
  if (!isPlainObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(v)) {
    if (SYSTEM.has(key)) continue;
    // Values are copied as they are: only attribute levels carry system members.
    out[key] = ATTR_CORE_MEMBERS.has(key) ? v[key] : withoutSystem(v[key]);
  }
  return out;
}

/** The source's members by the name the expander gave them. */
function byExpandedName(src: Record<string, unknown>, ctx: ResolvedContext, skip: ReadonlySet<string>): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const key of Object.keys(src)) if (!skip.has(key)) out.set(ctx.expandTerm(key), src[key]);
  return out;
}

function restoreAttributes(
  target: Record<string, unknown>,
  src: Record<string, unknown>,
  ctx: ResolvedContext,
  createdAt: string,
  modifiedAt: string,
  at: string,
): void {
  const sources = byExpandedName(src, ctx, ENTITY_CORE_MEMBERS);
  for (const iri of Object.keys(target)) {
    if (ENTITY_CORE_MEMBERS.has(iri)) continue;
    const raw = sources.get(iri);
    const list = Array.isArray(raw) ? raw : [raw];
    for (const inst of target[iri] as AttrInstance[]) {
      const from = list.find((s) => isPlainObject(s) && s.datasetId === inst.datasetId) as Record<string, unknown> | undefined;
      restoreInstance(inst, from ?? {}, ctx, createdAt, modifiedAt, `${at}${iri}`);
    }
  }
}

function restoreInstance(
  inst: AttrInstance,
  src: Record<string, unknown>,
  ctx: ResolvedContext,
  parentCreated: string,
  parentModified: string,
  at: string,
): void {
  const createdAt = timeOf(src.createdAt, `${at}.createdAt`, parentCreated);
  const modifiedAt = timeOf(src.modifiedAt, `${at}.modifiedAt`, src.createdAt === undefined ? parentModified : createdAt);
  inst.createdAt = createdAt;
  inst.modifiedAt = modifiedAt;
  const sources = byExpandedName(src, ctx, ATTR_CORE_MEMBERS);
  for (const key of Object.keys(inst)) {
    if (ATTR_CORE_MEMBERS.has(key)) continue;
    const sub = inst[key];
    if (!isPlainObject(sub)) continue;
    const from = sources.get(key);
    restoreInstance(sub as AttrInstance, isPlainObject(from) ? from : {}, ctx, createdAt, modifiedAt, `${at}.${key}`);
  }
}
