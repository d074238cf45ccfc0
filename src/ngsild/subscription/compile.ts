// A stored subscription compiled once for matching (CIM 009 v1.8 §5.8.6): entity selectors, watched attributes,
// triggers, q/geoQ/scopeQ predicates and the rendering options of its notifications, names expanded.
import type { StoredEntity } from '../entity/model.js';
import { linkUrlIn, type ResolvedContext } from '../context/resolved.js';
import type { JoinOptions, JoinRenderOptions } from '../entity/linked-join.js';
import { parseQ } from '../query/q-parser.js';
import { parseProjectionList, type Projection } from '../query/projection.js';
import { compileQ } from '../query/q-eval.js';
import { asWritten, resolveQ } from '../query/q-resolve.js';
import { parseGeoQueryObject, compileGeoQuery } from '../query/geoq.js';
import { parseScopeQ, compileScopeQ } from '../query/scopeq.js';
import { compileIdPattern } from '../query/id-pattern.js';
import { parseTypeExpression, compileTypeExpression, resolveTypeExpression } from '../query/type-expression.js';
import type { EntitySelectionQuery, EntitySelector } from '../query/entity-selection.js';
import { mqttNotifierInfo, type MqttNotifierInfo } from './mqtt-endpoint.js';
import { DEFAULT_TRIGGERS, type NotificationAccept, type NotificationTrigger, type SubscriptionDoc } from './model.js';

export interface CompiledEndpoint {
  uri: string;
  accept: NotificationAccept;
  timeoutMs: number | undefined;
  /** receiverInfo as HTTP headers, flat name/value list. */
  headers: string[];
  /** An mqtt:// or mqtts:// endpoint's QoS and protocol version (seed 001 §2.1); undefined for HTTP. */
  mqtt: MqttNotifierInfo | undefined;
}

export interface CompiledSubscription {
  tenant: string;
  id: string;
  /** Index keys: expanded types the selectors name; undefined when a selector matches any type. */
  typeIris: string[] | undefined;
  /** Index keys: ids of the selectors that name an id. */
  ids: string[] | undefined;
  /** True when some selector can only be found by a scan (type '*' without id, a type expression, no entities). */
  wildcard: boolean;
  /** undefined: no entities member, every entity is a candidate. */
  selects: ((e: StoredEntity) => boolean) | undefined;
  watched: ReadonlySet<string> | undefined;
  triggers: ReadonlySet<NotificationTrigger>;
  /** q, geoQ and scopeQ in one predicate. */
  filter: ((e: StoredEntity) => boolean) | undefined;
  /** What `selects` and `filter` test, as a store query (names expanded): what a periodic notification reads. */
  selection: Pick<EntitySelectionQuery, 'entities' | 'q' | 'scopeQ' | 'geo'>;
  isActive: boolean;
  expiresAtMs: number;
  /** Periodic subscriptions (timeInterval) notify on their clock, never on a change. */
  periodMs: number | undefined;
  throttlingMs: number;
  /** With the parsed pick and omit, whose braces project the entities `join` adds (§4.21). */
  render: JoinRenderOptions;
  /** NotificationParams join and joinLevel (§5.2.14): undefined without join or with `@none`. */
  join: JoinOptions | undefined;
  showChanges: boolean;
  endpoint: CompiledEndpoint;
  /** The @context notifications are compacted with (jsonldContext, else the subscription's own). */
  notifyContext: ResolvedContext;
  /** The URL of the `Link` header of application/json notifications: notifyContext's, as a receiver can reach it. */
  linkUrl: string;
}

/**
 * A stored pick or omit parsed (CIM 009 v1.8.1 §4.21). A subscription stored before projections were parsed may hold
 * names the parser refuses: those are taken as written, every one kept (pick) or left out (omit), with no braces.
 */
function projection(list: string[]): Projection {
  try {
    return parseProjectionList(list, 'notification.pick');
  } catch {
    const names = new Set(list);
    return { names, plain: names, linked: new Map() };
  }
}

/**
 * `brokerUrl` (--brokerUrl) is the broker's public address; without it, the one the subscription's request reached
 * (SubscriptionDoc.brokerUrl) names the @contexts the broker serves in the notifications' Link.
 */
export function compileSubscription(
  tenant: string,
  doc: SubscriptionDoc,
  matchContext: ResolvedContext,
  notifyContext: ResolvedContext,
  brokerUrl?: string,
): CompiledSubscription {
  const b = doc.body;
  const expand = matchContext.expandTerm.bind(matchContext);
  let typeIris: string[] | undefined = [];
  let ids: string[] | undefined;
  let wildcard = b.entities === undefined;
  let selects: ((e: StoredEntity) => boolean) | undefined;
  const selection: CompiledSubscription['selection'] = {};
  if (b.entities !== undefined) {
    const selectors: EntitySelector[] = [];
    const tests = b.entities.map((s) => {
      const selector: EntitySelector = {};
      let typeTest: ((types: readonly string[]) => boolean) | undefined;
      if (s.type !== '*') {
        selector.type = resolveTypeExpression(parseTypeExpression(s.type), expand);
        const compiled = compileTypeExpression(selector.type, asWritten);
        typeTest = compiled.matches;
        // A selector that names an id is found by the id (one per entity is common: by type they would all be
        // candidates of every write of that type); else by its types; else it is a wildcard.
        if (s.id === undefined) {
          if (compiled.typeIris === undefined) wildcard = true;
          else typeIris!.push(...compiled.typeIris);
        }
      } else if (s.id === undefined) wildcard = true;
      if (s.id !== undefined) {
        (ids ??= []).push(s.id);
        selector.ids = [s.id];
      }
      const id = s.id;
      const pattern = s.idPattern === undefined ? undefined : compileIdPattern(s.idPattern);
      if (s.idPattern !== undefined) selector.idPattern = s.idPattern;
      selectors.push(selector);
      return (e: StoredEntity): boolean =>
        (typeTest === undefined || typeTest(e.type)) && (id === undefined || e.id === id) && (pattern === undefined || pattern(e.id));
    });
    selects = tests.length === 1 ? tests[0] : (e) => tests.some((t) => t(e));
    selection.entities = selectors;
  }
  if (wildcard) typeIris = undefined;
  const preds: Array<(e: StoredEntity) => boolean> = [];
  if (b.q !== undefined) {
    selection.q = resolveQ(parseQ(b.q), expand);
    preds.push(compileQ(selection.q, asWritten));
  }
  if (b.geoQ !== undefined) {
    selection.geo = parseGeoQueryObject(b.geoQ, expand);
    preds.push(compileGeoQuery(selection.geo));
  }
  if (b.scopeQ !== undefined) {
    selection.scopeQ = parseScopeQ(b.scopeQ);
    const scope = compileScopeQ(selection.scopeQ);
    preds.push((e) => scope(e.scope));
  }
  const n = b.notification;
  const render: JoinRenderOptions = { format: n.format ?? 'normalized', sysAttrs: n.sysAttrs === true };
  if (n.attributes !== undefined) render.attrs = new Set(n.attributes.map(expand));
  if (n.pick !== undefined || n.omit !== undefined) {
    const pick = n.pick === undefined ? undefined : projection(n.pick);
    const omit = n.omit === undefined ? undefined : projection(n.omit);
    // pick keeps every name of its level; omit leaves out those without braces (`rel{...}` only projects inside).
    if (pick !== undefined) render.pick = pick.names;
    if (omit !== undefined) render.omit = omit.plain;
    render.projection = { pick, omit };
  }
  if (b.lang !== undefined) render.lang = b.lang;
  if (b.datasetId !== undefined) render.datasetId = new Set(b.datasetId);
  const headers: string[] = [];
  for (const kv of n.endpoint.receiverInfo ?? []) headers.push(kv.key, kv.value);
  return {
    tenant,
    id: b.id,
    typeIris,
    ids,
    wildcard,
    selects,
    watched: b.watchedAttributes === undefined ? undefined : new Set(b.watchedAttributes.map(expand)),
    triggers: new Set(b.notificationTrigger ?? DEFAULT_TRIGGERS),
    filter: preds.length === 0 ? undefined : preds.length === 1 ? preds[0] : (e) => preds.every((p) => p(e)),
    selection,
    isActive: b.isActive !== false,
    expiresAtMs: b.expiresAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(b.expiresAt),
    periodMs: b.timeInterval === undefined ? undefined : b.timeInterval * 1000,
    throttlingMs: (b.throttling ?? 0) * 1000,
    render,
    join: n.join === 'flat' || n.join === 'inline' ? { mode: n.join, level: n.joinLevel ?? 1, containedBy: new Set() } : undefined,
    showChanges: n.showChanges === true,
    endpoint: {
      uri: n.endpoint.uri,
      accept: n.endpoint.accept ?? 'application/json',
      timeoutMs: n.endpoint.timeout,
      headers,
      mqtt: /^mqtts?:/i.test(n.endpoint.uri) ? mqttNotifierInfo(n.endpoint.notifierInfo) : undefined,
    },
    notifyContext,
    // --brokerUrl is the configured address the resolver names kept @contexts with already.
    linkUrl: linkUrlIn(notifyContext, tenant, brokerUrl === undefined ? doc.brokerUrl : undefined),
  };
}
