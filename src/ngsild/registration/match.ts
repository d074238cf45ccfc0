// Which registrations a distributed retrieve or query reaches (CIM 009 v1.8.1 §4.3.6, §5.7.1.4, §5.7.2.4): pure, on
// registration bodies whose names are expanded (ops/registrations.ts keeps them so).
import type { RegistrationBody, RegistrationInfo, RegistrationMode } from '../subscription/registration.js';
import { compileIdPattern } from '../query/id-pattern.js';
import { infoCovers, type DiscoverySelection } from '../query/registration-match.js';
import { offers } from './operations.js';

/** A registration a request is forwarded to, and what of the entities it may answer. */
export interface SourceTarget {
  body: RegistrationBody;
  mode: RegistrationMode;
  /** The information entries that matched. */
  infos: RegistrationInfo[];
  /** The attributes (expanded) the source gives; undefined: any (one matching entry names none). */
  attrs: ReadonlySet<string> | undefined;
}

const identity = (s: string): string => s;

function attrsOf(infos: readonly RegistrationInfo[]): ReadonlySet<string> | undefined {
  const out = new Set<string>();
  for (const info of infos) {
    const names = [...(info.propertyNames ?? []), ...(info.relationshipNames ?? [])];
    if (names.length === 0) return undefined;
    for (const n of names) out.add(n);
  }
  return out;
}

function target(body: RegistrationBody, infos: RegistrationInfo[]): SourceTarget {
  return { body, mode: body.mode ?? 'inclusive', infos, attrs: attrsOf(infos) };
}

/** Whether an information entry covers entity `id` of `types` (unknown types: a type-only entry may hold it). */
function infoHoldsEntity(info: RegistrationInfo, id: string, types: readonly string[] | undefined): boolean {
  if (info.entities === undefined) return true;
  return info.entities.some((e) => {
    if (types !== undefined && !types.includes(e.type)) return false;
    if (e.id !== undefined) return e.id === id;
    if (e.idPattern !== undefined) return compileIdPattern(e.idPattern)(id);
    return true;
  });
}

/**
 * The registrations a retrieve of entity `id` goes to: those offering `operation` whose information covers the
 * entity (by id or pattern; by type when its local copy tells the types) and, with `attrs`, one of them.
 */
export function retrieveTargets(
  regs: readonly RegistrationBody[],
  operation: string,
  id: string,
  types: readonly string[] | undefined,
  attrs: ReadonlySet<string> | undefined,
): SourceTarget[] {
  const out: SourceTarget[] = [];
  for (const body of regs) {
    if (!offers(body.operations, operation)) continue;
    const infos = body.information.filter((info) => {
      if (!infoHoldsEntity(info, id, types)) return false;
      const names = [...(info.propertyNames ?? []), ...(info.relationshipNames ?? [])];
      return attrs === undefined || names.length === 0 || names.some((n) => attrs.has(n));
    });
    if (infos.length > 0) out.push(target(body, infos));
  }
  return out;
}

/** The registrations a query goes to: those offering `operation` whose information covers the selection. */
export function queryTargets(regs: readonly RegistrationBody[], operation: string, sel: DiscoverySelection): SourceTarget[] {
  const out: SourceTarget[] = [];
  for (const body of regs) {
    if (!offers(body.operations, operation)) continue;
    const infos = body.information.filter((info) => infoCovers(info, sel, identity));
    if (infos.length > 0) out.push(target(body, infos));
  }
  return out;
}

/** Whether a registration has not expired (§5.2.9 expiresAt) at `now` (ms). */
export function isLive(body: RegistrationBody, now: number): boolean {
  return body.expiresAt === undefined || Date.parse(body.expiresAt) > now;
}

/**
 * The registrations a write on entity `id` goes to (§5.6 distributed behaviour): those offering `operation` whose
 * information covers the entity and, when the write names attributes, one of them (an entry naming none covers every
 * attribute). Auxiliary registrations take no writes (§4.3.6.5).
 */
export function writeTargets(
  regs: readonly RegistrationBody[],
  operation: string,
  id: string,
  types: readonly string[] | undefined,
  attrs: readonly string[] | undefined,
): SourceTarget[] {
  const asked = attrs === undefined ? undefined : new Set(attrs);
  return retrieveTargets(
    regs.filter((r) => r.mode !== 'auxiliary'),
    operation,
    id,
    types,
    asked,
  );
}
