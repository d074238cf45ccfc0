// Validation of a Subscription body (CIM 009 v1.8 §5.2.12, §5.8.1, §5.8.2): every member checked for shape and
// meaning, q/geoQ/scopeQ/idPattern/type parsed once, and a refusal names the member (400 BadRequestData).
import { randomUUID } from 'node:crypto';
import { badRequest } from '../problem.js';
import { isDateTime, isPlainObject, isUri, show } from '../entity/syntax.js';
import { checkIdSize } from '../entity/limits.js';
import { checkNoProtoMember } from '../entity/proto-member.js';
import { parseQ } from '../query/q-parser.js';
import { checkDisjoint, parseProjectionList } from '../query/projection.js';
import { MAX_JOIN_LEVEL } from '../entity/linked-join.js';
import { parseGeoQueryObject } from '../query/geoq.js';
import { parseScopeQ } from '../query/scopeq.js';
import { compileIdPattern } from '../query/id-pattern.js';
import { MqttEndpointError, mqttNotifierInfo, parseMqttUri } from './mqtt-endpoint.js';
import { parseTypeExpression } from '../query/type-expression.js';
import {
  MIN_TIME_INTERVAL_S,
  NOTIFICATION_TRIGGERS,
  type EndpointBody,
  type EntitySelector,
  type KeyValuePair,
  type NotificationParamsBody,
  type NotificationTrigger,
  type SubscriptionBody,
} from './model.js';

/** Members a client may give; the computed ones (status, counters, times) are accepted and ignored. */
const MEMBERS: ReadonlySet<string> = new Set([
  'id',
  'type',
  'subscriptionName',
  'description',
  'entities',
  'watchedAttributes',
  'notificationTrigger',
  'timeInterval',
  'q',
  'geoQ',
  'scopeQ',
  'csf',
  'isActive',
  'notification',
  'expiresAt',
  'throttling',
  'lang',
  'datasetId',
  'jsonldContext',
  'temporalQ',
  '@context',
]);
const COMPUTED: ReadonlySet<string> = new Set(['status', 'createdAt', 'modifiedAt', 'deletedAt']);
const NOTIFICATION_MEMBERS: ReadonlySet<string> = new Set([
  'attributes',
  'pick',
  'omit',
  'format',
  'sysAttrs',
  'showChanges',
  'endpoint',
  'join',
  'joinLevel',
]);
const NOTIFICATION_COMPUTED: ReadonlySet<string> = new Set([
  'status',
  'timesSent',
  'timesFailed',
  'lastNotification',
  'lastFailure',
  'lastSuccess',
]);
const ENDPOINT_MEMBERS: ReadonlySet<string> = new Set(['uri', 'accept', 'timeout', 'cooldown', 'receiverInfo', 'notifierInfo']);
const ACCEPTS: ReadonlySet<string> = new Set(['application/json', 'application/ld+json', 'application/geo+json']);
const FORMATS: ReadonlySet<string> = new Set(['normalized', 'keyValues', 'simplified', 'concise']);
/** HTTP header names (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Upper bounds that keep one subscription's work bounded. */
const MAX_TIMEOUT_MS = 600_000;
const MAX_LIST = 1000;

export interface ValidateOptions {
  /** Expansion of the request's @context (to check that terms expand, and type expressions parse). */
  expand: (term: string) => string;
  /** URI schemes a notification endpoint may use (http, https; mqtt and mqtts once the MQTT bridge is loaded). */
  schemes: ReadonlySet<string>;
  now: number;
  /**
   * The WebSocket connection the request came on (README "WebSocket"), and the endpoint a PATCH keeps: a
   * `urn:ngsi-ld:WebSocket:` endpoint must be one of them, so a connection's subscriptions are those it made itself
   * (and the broker deletes them when it closes).
   */
  connection?: string;
  keptEndpoint?: string;
}

/** The endpoint of a subscription notified on a WebSocket connection of this broker (front/ws/). */
export const WEBSOCKET_ENDPOINT = /^urn:ngsi-ld:WebSocket:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Checks a whole Subscription (create, or the result of a PATCH) and returns its stored body. */
export function validateSubscription(input: Record<string, unknown>, opts: ValidateOptions): SubscriptionBody {
  // Members such as geoQ are kept as given: one the store cannot keep is refused, anywhere in the body.
  checkNoProtoMember(input, '');
  for (const k of Object.keys(input)) {
    if (!MEMBERS.has(k) && !COMPUTED.has(k) && !NOTIFICATION_COMPUTED.has(k)) throw badRequest(`${k}: not a member of a Subscription`);
  }
  if (input.type !== 'Subscription') throw badRequest(`type: must be 'Subscription', not ${show(input.type)}`);
  let id = input.id;
  if (id === undefined) id = `urn:ngsi-ld:Subscription:${randomUUID()}`;
  else if (!isUri(id)) throw badRequest(`id: ${show(id)} is not a URI`);
  else checkIdSize(id, 'id');
  const body: SubscriptionBody = { id: id as string, type: 'Subscription', notification: undefined as unknown as NotificationParamsBody };
  const text = (k: 'subscriptionName' | 'description' | 'q' | 'scopeQ' | 'csf' | 'lang'): string | undefined => {
    const v = input[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v === '') throw badRequest(`${k}: must be a non-empty string`);
    return v;
  };
  const name = text('subscriptionName');
  if (name !== undefined) body.subscriptionName = name;
  const description = text('description');
  if (description !== undefined) body.description = description;

  if (input.entities !== undefined) body.entities = entitySelectors(input.entities);
  if (input.watchedAttributes !== undefined) body.watchedAttributes = nameList(input.watchedAttributes, 'watchedAttributes');
  if (input.notificationTrigger !== undefined) body.notificationTrigger = triggers(input.notificationTrigger);
  if (input.timeInterval !== undefined) {
    const ti = input.timeInterval;
    if (typeof ti !== 'number' || !Number.isFinite(ti) || ti < MIN_TIME_INTERVAL_S)
      throw badRequest(`timeInterval: must be a number of seconds, at least ${MIN_TIME_INTERVAL_S}, not ${show(ti)}`);
    body.timeInterval = ti;
  }
  // CIM 009 §5.2.12: at least one of entities and watchedAttributes; a periodic subscription watches no attributes.
  if (body.timeInterval !== undefined) {
    if (body.watchedAttributes !== undefined) throw badRequest('timeInterval: cannot be given together with watchedAttributes');
    if (body.entities === undefined) throw badRequest('entities: a subscription with timeInterval needs entities');
  }
  if (body.entities === undefined && body.watchedAttributes === undefined)
    throw badRequest('entities: a subscription needs entities or watchedAttributes (or both)');

  const q = text('q');
  if (q !== undefined) {
    try {
      parseQ(q);
    } catch (e) {
      throw renamed(e, 'q');
    }
    body.q = q;
  }
  if (input.geoQ !== undefined) {
    try {
      parseGeoQueryObject(input.geoQ, opts.expand);
    } catch (e) {
      throw renamed(e, 'geoQ');
    }
    body.geoQ = input.geoQ as Record<string, unknown>;
  }
  const scopeQ = text('scopeQ');
  if (scopeQ !== undefined) {
    try {
      parseScopeQ(scopeQ);
    } catch (e) {
      throw renamed(e, 'scopeQ');
    }
    body.scopeQ = scopeQ;
  }
  const csf = text('csf');
  if (csf !== undefined) body.csf = csf;
  if (input.isActive !== undefined) {
    if (typeof input.isActive !== 'boolean') throw badRequest(`isActive: must be true or false, not ${show(input.isActive)}`);
    body.isActive = input.isActive;
  }
  if (input.expiresAt !== undefined) {
    if (!isDateTime(input.expiresAt)) throw badRequest(`expiresAt: ${show(input.expiresAt)} is not a date-time`);
    if (Date.parse(input.expiresAt) <= opts.now) throw badRequest(`expiresAt: ${input.expiresAt} is in the past`);
    body.expiresAt = input.expiresAt;
  }
  if (input.throttling !== undefined) {
    const th = input.throttling;
    if (typeof th !== 'number' || !Number.isFinite(th) || th < 0)
      throw badRequest(`throttling: must be a number of seconds, 0 or more, not ${show(th)}`);
    if (body.timeInterval !== undefined && th > 0) throw badRequest('throttling: cannot be given together with timeInterval');
    body.throttling = th;
  }
  const lang = text('lang');
  if (lang !== undefined) {
    if (
      !/^(\*|[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*)(;q=[01](\.\d{1,3})?)?(,(\*|[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*)(;q=[01](\.\d{1,3})?)?)*$/.test(
        lang,
      )
    )
      throw badRequest(`lang: ${show(lang)} is not a language tag list`);
    body.lang = lang;
  }
  if (input.datasetId !== undefined) {
    const ids = stringList(input.datasetId, 'datasetId');
    for (const d of ids) if (d !== '@none' && !isUri(d)) throw badRequest(`datasetId: ${show(d)} is not a URI`);
    body.datasetId = ids;
  }
  if (input.jsonldContext !== undefined) {
    if (!isUri(input.jsonldContext) || !/^https?:\/\//.test(input.jsonldContext))
      throw badRequest(`jsonldContext: ${show(input.jsonldContext)} is not a dereferenceable URI`);
    body.jsonldContext = input.jsonldContext;
  }
  if (input.notification === undefined) throw badRequest('notification: a subscription needs notification parameters');
  body.notification = notificationParams(input.notification, opts);
  return body;
}

/**
 * CIM 009 §5.8.2, §5.5.8: a PATCH replaces the members it gives (null removes an optional one); the result is
 * validated whole, so that a fragment cannot make an invalid subscription (timeInterval with watchedAttributes...).
 * `notification` is a member like the others: replaced whole, so a fragment's notification needs its endpoint.
 */
export function patchSubscription(current: SubscriptionBody, fragment: Record<string, unknown>, opts: ValidateOptions): SubscriptionBody {
  if (Object.keys(fragment).filter((k) => k !== '@context').length === 0) throw badRequest('the body holds no member to update');
  if (fragment.id !== undefined && fragment.id !== current.id) throw badRequest(`id: a subscription's id cannot be changed`);
  if (fragment.type !== undefined && fragment.type !== 'Subscription')
    throw badRequest(`type: must be 'Subscription', not ${show(fragment.type)}`);
  checkNoProtoMember(fragment, '');
  const merged: Record<string, unknown> = { ...(current as unknown as Record<string, unknown>) };
  for (const [k, v] of Object.entries(fragment)) {
    if (k === '@context') continue;
    if (v === null) delete merged[k];
    else merged[k] = v;
  }
  // A given expiresAt is checked against now; a kept one is not (status shows it expired).
  const keptExpiry = fragment.expiresAt === undefined ? current.expiresAt : undefined;
  if (keptExpiry !== undefined) delete merged.expiresAt;
  const out = validateSubscription(merged, opts);
  if (keptExpiry !== undefined) out.expiresAt = keptExpiry;
  return out;
}

function renamed(e: unknown, member: string): unknown {
  if (e instanceof Error && 'detail' in e && typeof (e as { detail: unknown }).detail === 'string') {
    const detail = (e as { detail: string }).detail;
    return badRequest(detail.startsWith(`${member}:`) || detail.startsWith(`${member}.`) ? detail : `${member}: ${detail}`);
  }
  return e;
}

function entitySelectors(v: unknown): EntitySelector[] {
  if (!Array.isArray(v) || v.length === 0) throw badRequest('entities: must be a non-empty array of entity selectors');
  if (v.length > MAX_LIST) throw badRequest(`entities: at most ${MAX_LIST} selectors`);
  return v.map((s, i) => {
    const at = `entities[${i}]`;
    if (!isPlainObject(s)) throw badRequest(`${at}: must be an object`);
    for (const k of Object.keys(s))
      if (k !== 'id' && k !== 'idPattern' && k !== 'type') throw badRequest(`${at}.${k}: not a member of an entity selector`);
    if (typeof s.type !== 'string' || s.type === '') throw badRequest(`${at}.type: an entity selector needs a type (or '*')`);
    const sel: EntitySelector = { type: s.type };
    if (s.type !== '*') {
      try {
        parseTypeExpression(s.type);
      } catch (e) {
        throw renamed(e, `${at}.type`);
      }
    }
    if (s.id !== undefined) {
      if (!isUri(s.id)) throw badRequest(`${at}.id: ${show(s.id)} is not a URI`);
      sel.id = s.id;
    }
    if (s.idPattern !== undefined) {
      if (typeof s.idPattern !== 'string') throw badRequest(`${at}.idPattern: must be a string`);
      try {
        compileIdPattern(s.idPattern);
      } catch (e) {
        throw renamed(e, `${at}.idPattern`);
      }
      sel.idPattern = s.idPattern;
    }
    return sel;
  });
}

function stringList(v: unknown, member: string): string[] {
  if (!Array.isArray(v) || v.length === 0) throw badRequest(`${member}: must be a non-empty array of strings`);
  if (v.length > MAX_LIST) throw badRequest(`${member}: at most ${MAX_LIST} entries`);
  for (const s of v) if (typeof s !== 'string' || s === '') throw badRequest(`${member}: ${show(s)} is not a non-empty string`);
  return [...v] as string[];
}

function nameList(v: unknown, member: string): string[] {
  const names = stringList(v, member);
  for (const n of names) if (/[<>"'=;()\s]/.test(n)) throw badRequest(`${member}: ${show(n)} is not a valid attribute name`);
  return names;
}

function triggers(v: unknown): NotificationTrigger[] {
  const list = stringList(v, 'notificationTrigger');
  for (const t of list)
    if (!(NOTIFICATION_TRIGGERS as readonly string[]).includes(t))
      throw badRequest(`notificationTrigger: '${t}' is not one of ${NOTIFICATION_TRIGGERS.join(', ')}`);
  return [...new Set(list)] as NotificationTrigger[];
}

function keyValues(v: unknown, member: string, headerNames: boolean): KeyValuePair[] {
  if (!Array.isArray(v)) throw badRequest(`${member}: must be an array of {key, value}`);
  return v.map((kv) => {
    if (!isPlainObject(kv) || typeof kv.key !== 'string' || kv.key === '' || typeof kv.value !== 'string')
      throw badRequest(`${member}: each entry must be {key: string, value: string}, not ${show(kv)}`);
    if (headerNames && !HEADER_NAME.test(kv.key)) throw badRequest(`${member}: '${kv.key}' is not a valid header name`);
    if (headerNames && /[\r\n\0]/.test(kv.value)) throw badRequest(`${member}: the value of '${kv.key}' holds a line break`);
    return { key: kv.key, value: kv.value };
  });
}

function notificationParams(v: unknown, opts: ValidateOptions): NotificationParamsBody {
  if (!isPlainObject(v)) throw badRequest('notification: must be an object');
  for (const k of Object.keys(v))
    if (!NOTIFICATION_MEMBERS.has(k) && !NOTIFICATION_COMPUTED.has(k))
      throw badRequest(`notification.${k}: not a member of notification parameters`);
  if (v.endpoint === undefined) throw badRequest('notification.endpoint: notification parameters need an endpoint');
  const out: NotificationParamsBody = { endpoint: endpoint(v.endpoint, opts) };
  if (v.attributes !== undefined) out.attributes = nameList(v.attributes, 'notification.attributes');
  // CIM 009 v1.8.1 §4.21: pick and omit are projections (parsed for their syntax), neither goes with attributes,
  // and no member is both picked and omitted.
  const pick = v.pick === undefined ? undefined : parseProjectionList(v.pick, 'notification.pick');
  const omit = v.omit === undefined ? undefined : parseProjectionList(v.omit, 'notification.omit');
  if ((pick !== undefined || omit !== undefined) && out.attributes !== undefined)
    throw badRequest(`notification.${pick !== undefined ? 'pick' : 'omit'}: cannot be combined with notification.attributes`);
  if (pick !== undefined && omit !== undefined) checkDisjoint(pick, omit, 'notification.');
  if (v.pick !== undefined) out.pick = nameList(v.pick, 'notification.pick');
  if (v.omit !== undefined) out.omit = nameList(v.omit, 'notification.omit');
  if (v.format !== undefined) {
    if (typeof v.format !== 'string' || !FORMATS.has(v.format))
      throw badRequest(`notification.format: ${show(v.format)} is not one of normalized, keyValues, simplified, concise`);
    // CIM 009 §4.5.3: simplified is the other name of keyValues; the subscription keeps the one name.
    out.format = (v.format === 'simplified' ? 'keyValues' : v.format) as NotificationParamsBody['format'];
  }
  for (const k of ['sysAttrs', 'showChanges'] as const) {
    if (v[k] === undefined) continue;
    if (typeof v[k] !== 'boolean') throw badRequest(`notification.${k}: must be true or false, not ${show(v[k])}`);
    out[k] = v[k] as boolean;
  }
  // CIM 009 v1.8.1 §5.2.14: join is flat, inline or @none (no join); joinLevel, the depth, only goes with a join. The
  // bound of the retrieval routes holds (ops/linked.ts): each level can multiply the entities a notification reads.
  if (v.join !== undefined) {
    if (v.join !== 'flat' && v.join !== 'inline' && v.join !== '@none')
      throw badRequest(`notification.join: ${show(v.join)} is not one of flat, inline, @none`);
    out.join = v.join;
  }
  if (v.joinLevel !== undefined) {
    const level = v.joinLevel;
    if (typeof level !== 'number' || !Number.isInteger(level) || level < 1 || level > MAX_JOIN_LEVEL)
      throw badRequest(`notification.joinLevel: must be an integer from 1 to ${MAX_JOIN_LEVEL}, not ${show(level)}`);
    if (out.join !== 'flat' && out.join !== 'inline')
      throw badRequest('notification.joinLevel: only with notification.join flat or inline');
    out.joinLevel = level;
  }
  return out;
}

function endpoint(v: unknown, opts: ValidateOptions): EndpointBody {
  if (!isPlainObject(v)) throw badRequest('notification.endpoint: must be an object');
  for (const k of Object.keys(v)) if (!ENDPOINT_MEMBERS.has(k)) throw badRequest(`notification.endpoint.${k}: not a member of an endpoint`);
  const uri = v.uri;
  if (typeof uri !== 'string' || !isUri(uri)) throw badRequest(`notification.endpoint.uri: ${show(uri)} is not a URI`);
  const scheme = uri.slice(0, uri.indexOf(':')).toLowerCase();
  if (uri.startsWith('urn:ngsi-ld:WebSocket:')) {
    if (!WEBSOCKET_ENDPOINT.test(uri) || (uri !== opts.connection && uri !== opts.keptEndpoint))
      throw badRequest('notification.endpoint.uri: a WebSocket endpoint must be the connection the subscription is sent on');
  } else if (scheme === 'mqtt' || scheme === 'mqtts') {
    // seed 001 §7: an MQTT endpoint needs the MQTT bridge.
    if (!opts.schemes.has(scheme))
      throw badRequest(`notification.endpoint.uri: ${scheme}:// endpoints need the MQTT bridge, which is not loaded`);
    try {
      parseMqttUri(uri, true);
    } catch (e) {
      if (e instanceof MqttEndpointError) throw badRequest(`notification.endpoint.uri: ${e.message}`);
      throw e;
    }
  } else if (!opts.schemes.has(scheme)) {
    throw badRequest(`notification.endpoint.uri: the scheme '${scheme}' is not supported (${[...opts.schemes].join(', ')})`);
  } else {
    // WHATWG URL parsing forgives `http:/x` and `http:x`; an endpoint must name its host as `scheme://host`.
    if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#]/i.test(uri)) throw badRequest(`notification.endpoint.uri: '${uri.slice(0, 200)}' names no host`);
    try {
      new URL(uri);
    } catch {
      throw badRequest(`notification.endpoint.uri: '${uri.slice(0, 200)}' is not a valid URL`);
    }
  }
  const out: EndpointBody = { uri };
  if (v.accept !== undefined) {
    if (typeof v.accept !== 'string' || !ACCEPTS.has(v.accept))
      throw badRequest(`notification.endpoint.accept: ${show(v.accept)} is not one of ${[...ACCEPTS].join(', ')}`);
    out.accept = v.accept as EndpointBody['accept'];
  }
  if (v.timeout !== undefined) {
    const t = v.timeout;
    if (typeof t !== 'number' || !Number.isInteger(t) || t <= 0 || t > MAX_TIMEOUT_MS)
      throw badRequest(`notification.endpoint.timeout: must be milliseconds from 1 to ${MAX_TIMEOUT_MS}, not ${show(t)}`);
    out.timeout = t;
  }
  if (v.receiverInfo !== undefined)
    out.receiverInfo = keyValues(v.receiverInfo, 'notification.endpoint.receiverInfo', scheme === 'http' || scheme === 'https');
  if (v.notifierInfo !== undefined) out.notifierInfo = keyValues(v.notifierInfo, 'notification.endpoint.notifierInfo', false);
  if (scheme === 'mqtt' || scheme === 'mqtts') {
    // seed 001 §2.1: MQTT-QoS 0-2 and MQTT-Version mqtt3.1.1 or mqtt5.0; other keys are not the MQTT binding's.
    try {
      mqttNotifierInfo(out.notifierInfo);
    } catch (e) {
      if (e instanceof MqttEndpointError) throw badRequest(`notification.endpoint.notifierInfo: ${e.message}`);
      throw e;
    }
  }
  return out;
}
