// Names in stored subscriptions and registrations (issue 4): entity types, watched and notified attributes and
// registered property and relationship names are kept as expanded IRIs, and shown with the terms of the @context of
// the request that reads them (CIM 009 v1.8 §5.5.7: compacted like entities). q, scopeQ and geoQ stay as written:
// they are expressions in the terms of the subscription's own @context, which the stored doc keeps for them.
import { parseTypeExpression, printTypeExpression, type TypeExpression } from '../query/type-expression.js';
import type { SubscriptionBody } from './model.js';
import type { RegistrationBody } from './registration.js';

type NameMap = (name: string) => string;

/** A type selector ('*', a type, or a type expression) with each type name mapped. */
export function mapTypeSelector(text: string, f: NameMap): string {
  if (text === '*') return text;
  return printTypeExpression(mapTypeNames(parseTypeExpression(text), f));
}

function mapTypeNames(node: TypeExpression, f: NameMap): TypeExpression {
  if (node.kind === 'and' || node.kind === 'or') return { kind: node.kind, terms: node.terms.map((t) => mapTypeNames(t, f)) };
  return { kind: 'type', name: f(node.name) };
}

/** The subscription with its names mapped (expand before storing, compact before showing); the input is not changed. */
export function mapSubscriptionNames<B extends SubscriptionBody>(body: B, f: NameMap): B {
  const out = { ...body };
  if (body.entities !== undefined) out.entities = body.entities.map((s) => ({ ...s, type: mapTypeSelector(s.type, f) }));
  if (body.watchedAttributes !== undefined) out.watchedAttributes = body.watchedAttributes.map(f);
  if (body.notification.attributes !== undefined)
    out.notification = { ...body.notification, attributes: body.notification.attributes.map(f) };
  return out;
}

/** The registration with the names of its information mapped; the input is not changed. */
export function mapRegistrationNames(body: RegistrationBody, f: NameMap): RegistrationBody {
  return {
    ...body,
    information: body.information.map((info) => {
      const out = { ...info };
      if (info.entities !== undefined) out.entities = info.entities.map((e) => ({ ...e, type: mapTypeSelector(e.type, f) }));
      if (info.propertyNames !== undefined) out.propertyNames = info.propertyNames.map(f);
      if (info.relationshipNames !== undefined) out.relationshipNames = info.relationshipNames.map(f);
      return out;
    }),
  };
}
