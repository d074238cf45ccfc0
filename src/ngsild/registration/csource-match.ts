// Which registrations a context source registration subscription is about (CIM 009 v1.8.1 §5.11.7, §5.11.2): its
// entity selectors and watched attributes read against each RegistrationInfo as a discovery reads them (§5.10.2),
// names expanded on both sides.
import type { SubscriptionBody } from '../subscription/model.js';
import type { RegistrationBody } from '../subscription/registration.js';
import { infoCovers, type DiscoverySelection } from '../query/registration-match.js';
import { compileTypeExpression, parseTypeExpression } from '../query/type-expression.js';
import { compileIdPattern } from '../query/id-pattern.js';

const identity = (s: string): string => s;

/** The discovery selections of a subscription: one per entity selector (or one of its watched attributes alone). */
export function subscriptionSelections(sub: SubscriptionBody): DiscoverySelection[] {
  const attrs = sub.watchedAttributes;
  if (sub.entities === undefined || sub.entities.length === 0) return [{ attrs }];
  return sub.entities.map((e) => ({
    types: e.type === undefined ? undefined : compileTypeExpression(parseTypeExpression(e.type), identity).matches,
    ids: e.id === undefined ? undefined : [e.id],
    idPattern: e.idPattern === undefined ? undefined : compileIdPattern(e.idPattern),
    attrs,
  }));
}

/** Whether the registration has information the subscription selects. */
export function registrationMatches(sels: readonly DiscoverySelection[], reg: RegistrationBody): boolean {
  return sels.some((sel) => reg.information.some((info) => infoCovers(info, sel, identity)));
}
