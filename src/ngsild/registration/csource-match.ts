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

/**
 * §5.11.7: "instead of providing the original context source registration, implementations should return context
 * source registration information relevant for the subscription, in particular only matching RegistrationInfo
 * elements": the registration with the elements the subscription selects; as it is when it selects none (a
 * registration that no longer matches is told whole).
 */
export function relevantInformation(sels: readonly DiscoverySelection[], reg: RegistrationBody): RegistrationBody {
  const info = reg.information.filter((i) => sels.some((sel) => infoCovers(i, sel, identity)));
  return info.length === 0 || info.length === reg.information.length ? reg : { ...reg, information: info };
}
