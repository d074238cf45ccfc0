// Context source registrations (CIM 009 v1.8 §5.2.9, §5.9): validation of a CSourceRegistration body, the
// selection of registrations by type/id/idPattern/attrs, and the entity/attribute pairs that exclusive and
// redirect registrations claim (§4.3.6.3). Kept beside subscriptions: both are stored requests about entities.
import { randomUUID } from 'node:crypto';
import { badRequest } from '../problem.js';
import { isDateTime, isPlainObject, isUri, show } from '../entity/syntax.js';
import { checkIdSize } from '../entity/limits.js';
import { geometryProblem } from '../entity/geometry.js';
import { checkNoProtoMember } from '../entity/proto-member.js';
import { compileIdPattern } from '../query/id-pattern.js';
import { parseTypeExpression } from '../query/type-expression.js';

export const REGISTRATIONS = 'csourceRegistrations';

export type RegistrationMode = 'inclusive' | 'exclusive' | 'redirect' | 'auxiliary';
const MODES: readonly RegistrationMode[] = ['inclusive', 'exclusive', 'redirect', 'auxiliary'];

/** CIM 009 v1.8 table 4.20-1: operation names and groups a registration may list. */
const OPERATIONS: ReadonlySet<string> = new Set([
  'federationOps',
  'updateOps',
  'retrieveOps',
  'redirectionOps',
  'createEntity',
  'updateEntity',
  'appendAttrs',
  'updateAttrs',
  'deleteAttrs',
  'deleteEntity',
  'mergeEntity',
  'replaceEntity',
  'replaceAttrs',
  'createBatch',
  'upsertBatch',
  'updateBatch',
  'deleteBatch',
  'mergeBatch',
  'upsertTemporal',
  'appendAttrsTemporal',
  'deleteAttrsTemporal',
  'updateAttrsTemporal',
  'deleteAttrInstanceTemporal',
  'deleteTemporal',
  'mergeTemporal',
  'retrieveEntity',
  'queryEntity',
  'queryBatch',
  'retrieveTemporal',
  'queryTemporal',
  'retrieveEntityTypes',
  'retrieveEntityTypeDetails',
  'retrieveEntityTypeInfo',
  'retrieveAttrTypes',
  'retrieveAttrTypeDetails',
  'retrieveAttrTypeInfo',
  'createSubscription',
  'updateSubscription',
  'retrieveSubscription',
  'querySubscription',
  'deleteSubscription',
  'retrieveEntityMap',
  'updateEntityMap',
  'deleteEntityMap',
  'retrieveLdContexts',
  'createLdContext',
  'deleteLdContext',
]);

const MEMBERS: ReadonlySet<string> = new Set([
  'id',
  'type',
  'registrationName',
  'description',
  'information',
  'tenant',
  'observationInterval',
  'managementInterval',
  'location',
  'observationSpace',
  'operationSpace',
  'expiresAt',
  'endpoint',
  'contextSourceInfo',
  'scope',
  'mode',
  'operations',
  'refreshRate',
  'management',
  '@context',
]);
const COMPUTED: ReadonlySet<string> = new Set([
  'status',
  'timesSent',
  'timesFailed',
  'lastSuccess',
  'lastFailure',
  'createdAt',
  'modifiedAt',
]);
const MANAGEMENT: ReadonlySet<string> = new Set(['localOnly', 'cacheDuration', 'timeout', 'cooldown']);

export interface RegistrationEntity {
  id?: string;
  idPattern?: string;
  type: string;
}

export interface RegistrationInfo {
  entities?: RegistrationEntity[];
  propertyNames?: string[];
  relationshipNames?: string[];
}

/** The validated registration: the members above as given (compact terms), plus registration properties. */
export interface RegistrationBody {
  id: string;
  type: 'ContextSourceRegistration';
  information: RegistrationInfo[];
  endpoint: string;
  mode?: RegistrationMode;
  operations?: string[];
  expiresAt?: string;
  [member: string]: unknown;
}

export interface RegistrationDoc {
  body: RegistrationBody;
  context: unknown;
  createdAt: string;
  modifiedAt: string;
}

export function validateRegistration(input: Record<string, unknown>, now: number): RegistrationBody {
  // Registration properties are kept as given: a member the store cannot keep is refused, anywhere in the body.
  checkNoProtoMember(input, '');
  if (input.type !== 'ContextSourceRegistration') throw badRequest(`type: must be 'ContextSourceRegistration', not ${show(input.type)}`);
  let id = input.id;
  if (id === undefined) id = `urn:ngsi-ld:ContextSourceRegistration:${randomUUID()}`;
  else if (!isUri(id)) throw badRequest(`id: ${show(id)} is not a URI`);
  else checkIdSize(id, 'id');
  const body: RegistrationBody = { id: id as string, type: 'ContextSourceRegistration', information: [], endpoint: '' };
  for (const [k, v] of Object.entries(input)) {
    if (k === '@context' || k === 'id' || k === 'type' || COMPUTED.has(k)) continue;
    if (!MEMBERS.has(k)) {
      // CIM 009 §5.2.9: other members are registration properties (a Property, or a plain value).
      if (/[<>"'=;()\s]/.test(k)) throw badRequest(`${k}: not a valid registration property name`);
      body[k] = v;
    }
  }
  for (const k of ['registrationName', 'description', 'tenant'] as const) {
    const v = input[k];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v === '') throw badRequest(`${k}: must be a non-empty string`);
    body[k] = v;
  }
  if (input.information === undefined) throw badRequest('information: a registration needs information');
  body.information = information(input.information);
  const endpoint = input.endpoint;
  if (typeof endpoint !== 'string' || !isUri(endpoint) || !/^https?:\/\/[^/?#]/i.test(endpoint))
    throw badRequest(`endpoint: ${show(endpoint)} is not an http(s) URI`);
  body.endpoint = endpoint;
  if (input.mode !== undefined) {
    if (typeof input.mode !== 'string' || !(MODES as readonly string[]).includes(input.mode))
      throw badRequest(`mode: ${show(input.mode)} is not one of ${MODES.join(', ')}`);
    body.mode = input.mode as RegistrationMode;
  }
  if (input.operations !== undefined) {
    if (!Array.isArray(input.operations) || input.operations.length === 0)
      throw badRequest('operations: must be a non-empty array of operation names');
    for (const op of input.operations)
      if (typeof op !== 'string' || !OPERATIONS.has(op)) throw badRequest(`operations: ${show(op)} is not an NGSI-LD operation or group`);
    body.operations = [...new Set(input.operations as string[])];
  }
  if (input.expiresAt !== undefined) {
    if (!isDateTime(input.expiresAt)) throw badRequest(`expiresAt: ${show(input.expiresAt)} is not a date-time`);
    if (Date.parse(input.expiresAt) <= now) throw badRequest(`expiresAt: ${input.expiresAt} is in the past`);
    body.expiresAt = input.expiresAt;
  }
  for (const k of ['observationInterval', 'managementInterval'] as const) if (input[k] !== undefined) body[k] = interval(input[k], k);
  for (const k of ['location', 'observationSpace', 'operationSpace'] as const) {
    if (input[k] === undefined) continue;
    const problem = geometryProblem(input[k]);
    if (problem !== undefined) throw badRequest(`${k}: not a GeoJSON geometry (${problem})`);
    body[k] = input[k];
  }
  if (input.contextSourceInfo !== undefined) {
    const csi = input.contextSourceInfo;
    if (
      !Array.isArray(csi) ||
      csi.some((kv) => !isPlainObject(kv) || typeof kv.key !== 'string' || kv.key === '' || typeof kv.value !== 'string')
    )
      throw badRequest('contextSourceInfo: must be an array of {key: string, value: string}');
    body.contextSourceInfo = csi;
  }
  if (input.scope !== undefined) {
    const scopes = Array.isArray(input.scope) ? input.scope : [input.scope];
    if (scopes.length === 0 || scopes.some((s) => typeof s !== 'string' || !/^\/[^/#+\s]+(\/[^/#+\s]+)*$/.test(s)))
      throw badRequest(`scope: ${show(input.scope)} is not a scope or a list of scopes`);
    body.scope = input.scope;
  }
  if (input.refreshRate !== undefined) {
    if (
      typeof input.refreshRate !== 'string' ||
      !/^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/.test(input.refreshRate)
    )
      throw badRequest(`refreshRate: ${show(input.refreshRate)} is not an ISO 8601 duration`);
    body.refreshRate = input.refreshRate;
  }
  if (input.management !== undefined) {
    const m = input.management;
    if (!isPlainObject(m)) throw badRequest('management: must be an object');
    for (const [k, v] of Object.entries(m)) {
      if (!MANAGEMENT.has(k)) throw badRequest(`management.${k}: not a member of registration management`);
      if (k === 'localOnly' ? typeof v !== 'boolean' : typeof v !== 'number' || !Number.isFinite(v) || v < 0)
        throw badRequest(`management.${k}: ${show(v)} is not ${k === 'localOnly' ? 'true or false' : 'a number, 0 or more'}`);
    }
    body.management = m;
  }
  checkModeShape(body);
  return body;
}

/** CIM 009 §5.9.3: a PATCH replaces the members given (null removes); the result must still be valid. */
export function patchRegistration(current: RegistrationBody, fragment: Record<string, unknown>, now: number): RegistrationBody {
  if (Object.keys(fragment).filter((k) => k !== '@context').length === 0) throw badRequest('the body holds no member to update');
  if (fragment.id !== undefined && fragment.id !== current.id) throw badRequest(`id: a registration's id cannot be changed`);
  checkNoProtoMember(fragment, '');
  const merged: Record<string, unknown> = { ...current };
  for (const [k, v] of Object.entries(fragment)) {
    if (k === '@context') continue;
    if (v === null) delete merged[k];
    else merged[k] = v;
  }
  const keptExpiry = fragment.expiresAt === undefined ? current.expiresAt : undefined;
  if (keptExpiry !== undefined) delete merged.expiresAt;
  const out = validateRegistration(merged, now);
  if (keptExpiry !== undefined) out.expiresAt = keptExpiry;
  return out;
}

function interval(v: unknown, member: string): Record<string, string> {
  if (!isPlainObject(v)) throw badRequest(`${member}: must be an object with startAt (and endAt)`);
  if (!isDateTime(v.startAt)) throw badRequest(`${member}.startAt: ${show(v.startAt)} is not a date-time`);
  const out: Record<string, string> = { startAt: v.startAt };
  if (v.endAt !== undefined) {
    if (!isDateTime(v.endAt)) throw badRequest(`${member}.endAt: ${show(v.endAt)} is not a date-time`);
    if (Date.parse(v.endAt) <= Date.parse(v.startAt)) throw badRequest(`${member}.endAt: must be after startAt`);
    out.endAt = v.endAt;
  }
  for (const k of Object.keys(v)) if (k !== 'startAt' && k !== 'endAt') throw badRequest(`${member}.${k}: not a member of a time interval`);
  return out;
}

function names(v: unknown, member: string): string[] {
  if (!Array.isArray(v) || v.length === 0) throw badRequest(`${member}: must be a non-empty array of attribute names`);
  for (const n of v)
    if (typeof n !== 'string' || n === '' || /[<>"'=;()\s]/.test(n))
      throw badRequest(`${member}: ${show(n)} is not a valid attribute name`);
  return [...v] as string[];
}

function information(v: unknown): RegistrationInfo[] {
  if (!Array.isArray(v) || v.length === 0) throw badRequest('information: must be a non-empty array of RegistrationInfo');
  return v.map((info, i) => {
    const at = `information[${i}]`;
    if (!isPlainObject(info)) throw badRequest(`${at}: must be an object`);
    for (const k of Object.keys(info))
      if (k !== 'entities' && k !== 'propertyNames' && k !== 'relationshipNames')
        throw badRequest(`${at}.${k}: not a member of RegistrationInfo`);
    const out: RegistrationInfo = {};
    if (info.entities !== undefined) {
      if (!Array.isArray(info.entities) || info.entities.length === 0) throw badRequest(`${at}.entities: must be a non-empty array`);
      out.entities = info.entities.map((e, j) => {
        const eat = `${at}.entities[${j}]`;
        if (!isPlainObject(e)) throw badRequest(`${eat}: must be an object`);
        for (const k of Object.keys(e))
          if (k !== 'id' && k !== 'idPattern' && k !== 'type') throw badRequest(`${eat}.${k}: not a member of EntityInfo`);
        if (typeof e.type !== 'string' || e.type === '') throw badRequest(`${eat}.type: an EntityInfo needs a type`);
        try {
          parseTypeExpression(e.type);
        } catch {
          throw badRequest(`${eat}.type: ${show(e.type)} is not a type`);
        }
        const ent: RegistrationEntity = { type: e.type };
        if (e.id !== undefined) {
          if (!isUri(e.id)) throw badRequest(`${eat}.id: ${show(e.id)} is not a URI`);
          ent.id = e.id;
        }
        if (e.idPattern !== undefined) {
          if (typeof e.idPattern !== 'string') throw badRequest(`${eat}.idPattern: must be a string`);
          try {
            compileIdPattern(e.idPattern);
          } catch {
            throw badRequest(`${eat}.idPattern: ${show(e.idPattern)} is not a valid pattern`);
          }
          ent.idPattern = e.idPattern;
        }
        return ent;
      });
    }
    if (info.propertyNames !== undefined) out.propertyNames = names(info.propertyNames, `${at}.propertyNames`);
    if (info.relationshipNames !== undefined) out.relationshipNames = names(info.relationshipNames, `${at}.relationshipNames`);
    if (Object.keys(out).length === 0) throw badRequest(`${at}: needs entities, propertyNames or relationshipNames`);
    return out;
  });
}

/** CIM 009 §4.3.6.3: exclusive registrations name entity ids and attributes, never patterns. */
function checkModeShape(body: RegistrationBody): void {
  if (body.mode !== 'exclusive') return;
  for (const [i, info] of body.information.entries()) {
    if (info.entities === undefined || info.entities.some((e) => e.id === undefined || e.idPattern !== undefined))
      throw badRequest(`information[${i}].entities: an exclusive registration names each entity by id (no idPattern)`);
    if (info.propertyNames === undefined && info.relationshipNames === undefined)
      throw badRequest(`information[${i}]: an exclusive registration names the attributes it registers`);
  }
}

/** One entity (by id, or any entity of a type) and the attribute IRIs a registration claims for it (undefined: all). */
export interface Claim {
  id: string | undefined;
  typeIri: string;
  attrIris: ReadonlySet<string> | undefined;
}

export function claimsOf(body: RegistrationBody, expand: (term: string) => string): Claim[] {
  const claims: Claim[] = [];
  for (const info of body.information) {
    const names = [...(info.propertyNames ?? []), ...(info.relationshipNames ?? [])];
    const attrIris = names.length === 0 ? undefined : new Set(names.map(expand));
    for (const e of info.entities ?? []) claims.push({ id: e.id, typeIri: expand(e.type), attrIris });
  }
  return claims;
}

/** Two claims on the same entity (or type) and at least one common attribute. */
export function claimsOverlap(a: Claim, b: Claim): boolean {
  if (a.typeIri !== b.typeIri) return false;
  if (a.id !== undefined && b.id !== undefined && a.id !== b.id) return false;
  if (a.attrIris === undefined || b.attrIris === undefined) return true;
  for (const x of a.attrIris) if (b.attrIris.has(x)) return true;
  return false;
}
