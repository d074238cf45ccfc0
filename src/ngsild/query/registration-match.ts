// Which context source registrations a discovery finds (CIM 009 v1.8 §5.10.2): the entity and attribute part,
// matched against each RegistrationInfo, and the temporal query, matched against the registration's intervals.
import type { RegistrationBody, RegistrationInfo } from '../subscription/registration.js';
import type { TemporalQuery } from '../temporal/temporal-query.js';
import { compileIdPattern } from './id-pattern.js';

/** The entity and attribute part of a discovery, names expanded with the request's @context. */
export interface DiscoverySelection {
  /** Whether one of the registered entity types (expanded) is asked for. */
  types?: (typeIris: readonly string[]) => boolean;
  ids?: readonly string[];
  idPattern?: (id: string) => boolean;
  attrs?: readonly string[];
}

/**
 * Whether a RegistrationInfo covers the selection (§5.2.10): an info without `entities` covers every entity, one
 * without property or relationship names every attribute. `expand` expands the registration's own terms.
 */
export function infoCovers(info: RegistrationInfo, sel: DiscoverySelection, expand: (term: string) => string): boolean {
  const names = [...(info.propertyNames ?? []), ...(info.relationshipNames ?? [])];
  if (sel.attrs !== undefined && names.length > 0) {
    const iris = names.map(expand);
    if (!sel.attrs.some((a) => iris.includes(a))) return false;
  }
  if (info.entities === undefined) return true;
  if (sel.types === undefined && sel.ids === undefined && sel.idPattern === undefined) return true;
  return info.entities.some((e) => {
    if (sel.types !== undefined && !sel.types([expand(e.type)])) return false;
    if (sel.ids !== undefined) {
      if (e.id !== undefined && !sel.ids.includes(e.id)) return false;
      if (e.id === undefined && e.idPattern !== undefined) {
        const registered = compileIdPattern(e.idPattern);
        if (!sel.ids.some((id) => registered(id))) return false;
      }
    }
    // A registered idPattern and an asked one may share ids: only a registered id can be told apart.
    if (sel.idPattern !== undefined && e.id !== undefined && !sel.idPattern(e.id)) return false;
    return true;
  });
}

/**
 * Whether a registration's time interval meets the temporal query (§5.10.2.4, §4.11): observedAt asks the
 * observationInterval, createdAt and modifiedAt the managementInterval. A registration without that interval sets
 * no bound in time and matches; an interval without endAt is open.
 */
export function intervalMeets(body: RegistrationBody, tq: TemporalQuery): boolean {
  if (tq.window === undefined) return true;
  const member = tq.timeproperty === 'observedAt' ? 'observationInterval' : 'managementInterval';
  const interval = body[member] as { startAt: string; endAt?: string } | undefined;
  if (interval === undefined) return true;
  const start = Date.parse(interval.startAt);
  const end = interval.endAt === undefined ? Infinity : Date.parse(interval.endAt);
  // before: strictly before timeAt; after: at or after it (temporal-query.ts sets to and from so).
  if (tq.to !== undefined && !(start < tq.to)) return false;
  if (tq.from !== undefined && !(end >= tq.from)) return false;
  return true;
}
