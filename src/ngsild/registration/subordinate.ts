// Subordinate subscriptions (CIM 009 v1.8.1 §4.3.6, §5.8.1.4 distributed behaviour): which registrations a
// subscription is made again on, and the subscription the broker makes there. Pure: the notifier does the I/O.
import type { SubscriptionBody, SubscriptionDoc } from '../subscription/model.js';
import type { RegistrationBody } from '../subscription/registration.js';
import { mapSubscriptionNames } from '../subscription/names.js';
import { registrationMatches, subscriptionSelections } from './csource-match.js';
import { isLive } from './match.js';
import { offers } from './operations.js';

/**
 * The ids of the subscriptions this broker makes on sources. A subscription with such an id is itself never made
 * again on sources: two brokers registered on each other make one subordinate each, not one after the other forever.
 */
export const SUBORDINATE_ID_PREFIX = 'urn:ngsi-ld:Subscription:subordinate:';

export function isSubordinateId(id: string): boolean {
  return id.startsWith(SUBORDINATE_ID_PREFIX);
}

/**
 * The registrations a subscription is made again on: live, offering `createSubscription` (the `federationOps` group,
 * or a registration without `operations`), not auxiliary (an auxiliary source only fills in the gaps of a read,
 * §4.3.6.2), and with information the subscription selects (its entities and watched attributes read as a csource
 * subscription reads them, §5.11.7).
 */
export function subordinateTargets(sub: SubscriptionBody, regs: readonly RegistrationBody[], now: number): RegistrationBody[] {
  if (isSubordinateId(sub.id)) return [];
  const sels = subscriptionSelections(sub);
  return regs.filter(
    (r) =>
      isLive(r, now) &&
      (r.mode ?? 'inclusive') !== 'auxiliary' &&
      offers(r.operations, 'createSubscription') &&
      registrationMatches(sels, r),
  );
}

/**
 * The subscription made on a source for `doc`: its selection and triggers as they are, names in the terms of its own
 * @context (sent with it, so q, geoQ and scopeQ read as the client wrote them), notifying `endpointUri` (this broker)
 * in the normalized format with system attributes, which the broker renders in the original's format when it relays.
 */
export function subordinateBody(
  doc: SubscriptionDoc,
  id: string,
  endpointUri: string,
  compact: (iri: string) => string,
): Record<string, unknown> {
  const b = mapSubscriptionNames(doc.body, compact);
  const out: Record<string, unknown> = {
    id,
    type: 'Subscription',
    entities: b.entities,
    watchedAttributes: b.watchedAttributes,
    notificationTrigger: b.notificationTrigger,
    timeInterval: b.timeInterval,
    q: b.q,
    geoQ: b.geoQ,
    scopeQ: b.scopeQ,
    isActive: b.isActive,
    expiresAt: b.expiresAt,
    throttling: b.throttling,
    lang: b.lang,
    datasetId: b.datasetId,
    notification: {
      attributes: b.notification.attributes,
      format: 'normalized',
      sysAttrs: true,
      showChanges: b.notification.showChanges,
      endpoint: { uri: endpointUri, accept: 'application/json' },
    },
  };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  const n = out.notification as Record<string, unknown>;
  for (const k of Object.keys(n)) if (n[k] === undefined) delete n[k];
  if (doc.context !== undefined && doc.context !== null) out['@context'] = doc.context;
  return out;
}
