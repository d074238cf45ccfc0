// GeoJSON rendering of entities (CIM 009 v1.8 §4.7, §6.3.15): a Feature per entity whose geometry is the value of
// one GeoProperty (`location` unless asked otherwise) and whose properties are the entity in the chosen format.
import type { ResolvedContext } from '../context/resolved.js';
import type { AttrInstance, StoredEntity } from './model.js';
import { renderEntityMembers, type RenderEntityOptions } from './render.js';

export interface RenderGeoJsonOptions extends RenderEntityOptions {
  /** Compact name of the GeoProperty that gives the geometry (the `geometryProperty` parameter); default `location`. */
  geometryProperty?: string;
}

export interface GeoJsonFeature {
  id: string;
  type: 'Feature';
  geometry: unknown;
  properties: Record<string, unknown>;
}

export function renderGeoJson(entity: StoredEntity, ctx: ResolvedContext, opts: RenderGeoJsonOptions): GeoJsonFeature {
  const properties: Record<string, unknown> = {};
  renderEntityMembers(entity, ctx, opts, properties, false);
  return featureOf(entity, ctx, opts, properties);
}

/** The Feature of an entity whose properties are already rendered (e.g. with linked entities inline). */
export function featureOf(
  entity: StoredEntity,
  ctx: ResolvedContext,
  opts: RenderGeoJsonOptions,
  properties: Record<string, unknown>,
): GeoJsonFeature {
  const geoIri = ctx.expandTerm(opts.geometryProperty ?? 'location');
  return { id: entity.id, type: 'Feature', geometry: geometryOf(entity[geoIri] as AttrInstance[] | undefined, opts.datasetId), properties };
}

/** The geometry of the GeoProperty: the default instance unless datasetId selects others; null when there is none. */
function geometryOf(instances: AttrInstance[] | undefined, datasetIds: ReadonlySet<string> | undefined): unknown {
  if (instances === undefined) return null;
  for (const inst of instances) {
    if (inst.type !== 'GeoProperty') continue;
    if (datasetIds !== undefined && !datasetIds.has(inst.datasetId ?? '@none')) continue;
    return inst.value ?? null;
  }
  return null;
}

export function featureCollection(features: GeoJsonFeature[]): { type: 'FeatureCollection'; features: GeoJsonFeature[] } {
  return { type: 'FeatureCollection', features };
}
