// The Notification a subscription sends (CIM 009 v1.8 §5.3.1, §5.3.2): entities rendered in the subscription's
// format with its @context, as application/json (+Link), application/ld+json (@context) or application/geo+json.
// `notifiedAt` is added by the notifier when it sends, so the body is serialized here without it.
import { randomUUID } from 'node:crypto';
import type { StoredEntity } from '../entity/model.js';
import { renderEntity } from '../entity/render.js';
import { renderGeoJson, featureCollection } from '../entity/geojson.js';
import { formatLinkHeader } from '../context/link-header.js';
import type { CompiledSubscription } from './compile.js';
import type { NotificationTrigger } from './model.js';

export interface NotificationPayload {
  /** JSON text of the Notification without `notifiedAt`: an object, so it starts with '{'. */
  body: string;
  /** Content-Type, Link, NGSILD-Tenant and receiverInfo headers, flat name/value list. */
  headers: string[];
}

export function buildNotification(sub: CompiledSubscription, entities: readonly StoredEntity[], trigger: NotificationTrigger | undefined): NotificationPayload {
  const ctx = sub.notifyContext;
  const accept = sub.endpoint.accept;
  const jsonLd = accept === 'application/ld+json';
  let data: unknown;
  if (accept === 'application/geo+json') data = featureCollection(entities.map((e) => renderGeoJson(e, ctx, sub.render)));
  else {
    data = entities.map((e) => {
      const rendered = renderDeleted(e) ?? renderEntity(e, ctx, sub.render);
      // CIM 009 §5.3.1: data is Entity[], and an entity in JSON-LD carries its @context, as each entity of an
      // application/ld+json query answer does (the ETSI OpenAPI gives the Notification no @context member).
      if (jsonLd) rendered['@context'] = ctx.contextValue;
      return rendered;
    });
  }
  const n: Record<string, unknown> = { id: `urn:ngsi-ld:Notification:${randomUUID()}`, type: 'Notification', subscriptionId: sub.id, data };
  if (trigger !== undefined) n.triggerReason = trigger;
  const headers: string[] = ['Content-Type', accept];
  // The Notification itself is a JSON-LD document too: its own members are terms of the core @context.
  if (jsonLd) n['@context'] = ctx.contextValue;
  else headers.push('Link', formatLinkHeader(sub.linkUrl));
  // The notification of a tenant's subscription names its tenant (CIM 009 §4.14 tenants; Orion-LD sends it; tenant
  // names are checked on the request that created it: lower-case letters, digits, '_' and '-'). receiverInfo,
  // pushed after, may still set the header to what the receiver wants.
  if (sub.tenant !== '') headers.push('NGSILD-Tenant', sub.tenant);
  headers.push(...sub.endpoint.headers);
  return { body: JSON.stringify(n), headers };

  function renderDeleted(e: StoredEntity): Record<string, unknown> | undefined {
    if (e.deletedAt === undefined) return undefined;
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
}
