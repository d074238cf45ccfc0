// The Notification a subscription sends (CIM 009 v1.8 §5.3.1, §5.3.2): entities rendered in the subscription's
// format with its @context, as application/json (+Link), application/ld+json (@context) or application/geo+json, and
// with `join` (§5.2.14) the entities they link to (§4.5.23), read through the caller's ReadEntities.
// `notifiedAt` is added by the notifier when it sends, so the body is serialized here without it.
import { randomUUID } from 'node:crypto';
import type { StoredEntity } from '../entity/model.js';
import { renderEntity } from '../entity/render.js';
import { renderGeoJson, featureCollection } from '../entity/geojson.js';
import { JoinSource, flatLinked, joinedFeatures, renderInline, type ReadEntities } from '../entity/linked-join.js';
import { formatLinkHeader } from '../context/link-header.js';
import type { CompiledSubscription } from './compile.js';
import type { NotificationTrigger } from './model.js';

export interface NotificationPayload {
  /** JSON text of the Notification without `notifiedAt`: an object, so it starts with '{'. */
  body: string;
  /** Content-Type, Link, NGSILD-Tenant and receiverInfo headers, flat name/value list. */
  headers: string[];
}

/** The notification of `entities`, without linked entities (the subscription's join is left to buildJoinedNotification). */
export function buildNotification(
  sub: CompiledSubscription,
  entities: readonly StoredEntity[],
  trigger: NotificationTrigger | undefined,
): NotificationPayload {
  const ctx = sub.notifyContext;
  let data: unknown;
  if (sub.endpoint.accept === 'application/geo+json') data = featureCollection(entities.map((e) => renderGeoJson(e, ctx, sub.render)));
  else
    data = withContexts(
      sub,
      entities.map((e) => renderDeleted(sub, e, trigger) ?? renderEntity(e, ctx, sub.render)),
    );
  return notificationOf(sub, data, trigger);
}

/**
 * The notification of `entities` with the entities they link to (§4.5.23 applied to notifications, §5.2.14 join and
 * joinLevel), as a retrieval with the same join, format, attributes, pick and omit answers: with `flat` the linked
 * entities follow the notified ones in `data`, with `inline` each Relationship carries its target under `entity`.
 * At most MAX_JOINED linked entities are read for one notification. A deleted entity links nothing: it is notified
 * as buildNotification does.
 */
export async function buildJoinedNotification(
  sub: CompiledSubscription,
  entities: readonly StoredEntity[],
  trigger: NotificationTrigger | undefined,
  read: ReadEntities,
): Promise<NotificationPayload> {
  const join = sub.join;
  if (join === undefined) return buildNotification(sub, entities, trigger);
  const ctx = sub.notifyContext;
  const src = new JoinSource(sub.tenant, read, ctx);
  const live = entities.filter((e) => e.deletedAt === undefined);
  let data: unknown;
  if (sub.endpoint.accept === 'application/geo+json') {
    const features = await joinedFeatures(src, live, join, sub.render);
    for (const e of entities) if (e.deletedAt !== undefined) features.push(renderGeoJson(e, ctx, sub.render));
    data = featureCollection(features);
  } else {
    const rendered: Record<string, unknown>[] = [];
    for (const e of entities) {
      const deleted = renderDeleted(sub, e, trigger);
      rendered.push(deleted ?? (join.mode === 'inline' ? await renderInline(src, e, join, sub.render) : renderEntity(e, ctx, sub.render)));
    }
    if (join.mode === 'flat') rendered.push(...(await flatLinked(src, live, join, sub.render)));
    data = withContexts(sub, rendered);
  }
  return notificationOf(sub, data, trigger);
}

/**
 * CIM 009 §5.3.1: data is Entity[], and an entity in JSON-LD carries its @context, as each entity of an
 * application/ld+json query answer does (the ETSI OpenAPI gives the Notification no @context member).
 */
function withContexts(sub: CompiledSubscription, data: Record<string, unknown>[]): Record<string, unknown>[] {
  if (sub.endpoint.accept === 'application/ld+json') for (const e of data) e['@context'] = sub.notifyContext.contextValue;
  return data;
}

function notificationOf(sub: CompiledSubscription, data: unknown, trigger: NotificationTrigger | undefined): NotificationPayload {
  const ctx = sub.notifyContext;
  const accept = sub.endpoint.accept;
  const n: Record<string, unknown> = { id: `urn:ngsi-ld:Notification:${randomUUID()}`, type: 'Notification', subscriptionId: sub.id, data };
  if (trigger !== undefined) n.triggerReason = trigger;
  const headers: string[] = ['Content-Type', accept];
  // The Notification itself is a JSON-LD document too: its own members are terms of the core @context.
  if (accept === 'application/ld+json') n['@context'] = ctx.contextValue;
  else headers.push('Link', formatLinkHeader(sub.linkUrl));
  // The notification of a tenant's subscription names its tenant (CIM 009 §4.14 tenants; Orion-LD sends it; tenant
  // names are checked on the request that created it: lower-case letters, digits, '_' and '-'). receiverInfo,
  // pushed after, may still set the header to what the receiver wants.
  if (sub.tenant !== '') headers.push('NGSILD-Tenant', sub.tenant);
  headers.push(...sub.endpoint.headers);
  return { body: JSON.stringify(n), headers };
}

function renderDeleted(
  sub: CompiledSubscription,
  e: StoredEntity,
  trigger: NotificationTrigger | undefined,
): Record<string, unknown> | undefined {
  if (e.deletedAt === undefined) return undefined;
  const ctx = sub.notifyContext;
  const type = e.type.map((t) => ctx.compactIri(t));
  // CIM 009 §5.8.6 entityDeleted: the entity's id, type and when it was deleted; with sysAttrs, its other times too.
  const out: Record<string, unknown> = { id: e.id, type: type.length === 1 ? type[0] : type, deletedAt: e.deletedAt };
  if (sub.render.sysAttrs === true) {
    out.createdAt = e.createdAt;
    out.modifiedAt = e.modifiedAt;
  }
  // attributeDeleted by the entity's deletion, or entityDeleted with showChanges (match.ts): the deleted attributes
  // follow, as NGSI-LD null.
  return trigger === 'attributeDeleted' || sub.showChanges ? { ...renderEntity(e, ctx, sub.render), ...out } : out;
}
