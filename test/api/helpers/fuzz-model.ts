// The model of the fuzz test's entity operations: what each accepted write should leave in the store, and the
// status each operation should answer, computed from the operations alone (CIM 009 v1.8 §5.6, §5.9).
import fc from 'fast-check';

/** A JSON value other than null: what a Property's value may be. */
export type Value = fc.JsonValue;

/**
 * One tenant: whether it exists (a create or upsert that wrote something made it; CIM 009 §4.14: any other request
 * in a tenant that does not exist is 404 NonexistentTenant), and its entities: id → attribute name → value (default
 * instances only).
 */
export interface Model {
  tenantExists: boolean;
  entities: Map<string, Map<string, Value>>;
}

export const emptyModel = (): Model => ({ tenantExists: false, entities: new Map() });

export const ENTITY_TYPE = 'Fz';
export const ENTITY_COUNT = 6;
export const entityId = (e: number): string => `urn:ngsi-ld:Fz:${e}`;

// Names that expand and compact back to themselves with the core @context: plain terms, non-ASCII letters, an
// absolute IRI, and names that are JavaScript's own (`__proto__`, `constructor`).
export const ATTR_NAMES = ['a', 'b', 'temp', 'x_y', 'ñame', '名前', 'urn:fz:attr', '__proto__', 'constructor'] as const;

/**
 * Member names inside values, the JSON-LD and JavaScript ones included: a value is opaque data (§4.5.2). A member
 * `__proto__` makes the write a 400 (README "Limits": the store could not keep it).
 */
const VALUE_KEYS = fc.oneof(
  fc.constantFrom('constructor', 'toString', '__proto__', '@context', '@value', '@id', '@type', 'type', 'value', 'id', ''),
  fc.string({ unit: 'binary', maxLength: 8 }),
);

/** Whether a value holds a member named `__proto__` anywhere: the broker refuses such a value. */
function holdsProto(v: Value | null): boolean {
  if (Array.isArray(v)) return v.some(holdsProto);
  if (v === null || typeof v !== 'object') return false;
  return Object.keys(v).some((k) => k === '__proto__' || holdsProto((v as Record<string, Value>)[k]!));
}

const refused = (attrs: Record<string, Value | null>): boolean => Object.values(attrs).some(holdsProto);

/** Values: any JSON but null and the deletion marker; -0 and such come back as JSON gives them. */
export const valueArb: fc.Arbitrary<Value> = fc
  .jsonValue({ maxDepth: 3, depthSize: 'small', stringUnit: 'binary' })
  .chain((v) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? fc.dictionary(VALUE_KEYS, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }).map((extra) => ({ ...(v as object), ...extra }) as Value)
      : fc.constant(v as Value),
  )
  .filter((v) => v !== null && v !== 'urn:ngsi-ld:null')
  .map((v) => JSON.parse(JSON.stringify(v)) as Value);

const attrsArb = (min: number): fc.Arbitrary<Record<string, Value>> =>
  fc.dictionary(fc.constantFrom(...ATTR_NAMES), valueArb, { minKeys: min, maxKeys: 3 });

const e = fc.integer({ min: 0, max: ENTITY_COUNT - 1 });

/** One request of the model: valid, or made invalid by one mutation (then it must be refused whole). */
export type Op =
  | { kind: 'create'; e: number; attrs: Record<string, Value> }
  | { kind: 'replace'; e: number; attrs: Record<string, Value> }
  | { kind: 'append'; e: number; attrs: Record<string, Value>; noOverwrite: boolean }
  | { kind: 'update'; e: number; attrs: Record<string, Value> }
  | { kind: 'merge'; e: number; attrs: Record<string, Value | null> }
  | { kind: 'deleteAttr'; e: number; name: string }
  | { kind: 'delete'; e: number }
  | { kind: 'upsert'; entries: Array<{ e: number; attrs: Record<string, Value> }>; update: boolean }
  | { kind: 'batchDelete'; es: number[] }
  | { kind: 'invalid'; base: 'create' | 'replace' | 'append' | 'merge'; e: number; attrs: Record<string, Value>; bad: Mutation };

/** What makes a body invalid; each is a 400 whichever entity it names. */
export type Mutation =
  | 'forbiddenName'
  | 'bogusType'
  | 'tooDeep'
  | 'loneSurrogate'
  | 'array'
  | 'contextInJson'
  | 'typeNull'
  | 'nullOnCreate'
  | 'noValue'
  | 'badId';

const MUTATIONS: Record<'create' | 'replace' | 'append' | 'merge', Mutation[]> = {
  create: ['forbiddenName', 'bogusType', 'tooDeep', 'loneSurrogate', 'array', 'contextInJson', 'nullOnCreate', 'noValue', 'badId'],
  replace: ['forbiddenName', 'bogusType', 'tooDeep', 'loneSurrogate', 'array', 'contextInJson', 'nullOnCreate', 'noValue'],
  append: ['forbiddenName', 'bogusType', 'tooDeep', 'loneSurrogate', 'array', 'contextInJson', 'noValue'],
  merge: ['forbiddenName', 'bogusType', 'tooDeep', 'loneSurrogate', 'array', 'contextInJson', 'typeNull'],
};

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('create' as const), e, attrs: attrsArb(0) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('replace' as const), e, attrs: attrsArb(0) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('append' as const), e, attrs: attrsArb(1), noOverwrite: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('update' as const), e, attrs: attrsArb(1) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('merge' as const),
      e,
      attrs: fc.dictionary(fc.constantFrom(...ATTR_NAMES), fc.option(valueArb, { freq: 3 }), { minKeys: 1, maxKeys: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteAttr' as const), e, name: fc.constantFrom(...ATTR_NAMES) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), e }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('upsert' as const),
      entries: fc.uniqueArray(fc.record({ e, attrs: attrsArb(0) }), { minLength: 1, maxLength: 3, selector: (x) => x.e }),
      update: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('batchDelete' as const), es: fc.uniqueArray(e, { minLength: 1, maxLength: 3 }) }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom('create' as const, 'replace' as const, 'append' as const, 'merge' as const).chain((base) =>
      fc.record({
        kind: fc.constant('invalid' as const),
        base: fc.constant(base),
        e,
        attrs: attrsArb(1),
        bad: fc.constantFrom(...MUTATIONS[base]),
      }),
    ),
  },
);

/** The HTTP request of an operation: method, path under the API prefix, body text. */
export interface Request {
  method: string;
  path: string;
  body?: string;
  contentType?: string;
}

/** The attributes in normalized form; a null-prototype object, so that `__proto__` is a member like any other. */
const normalized = (attrs: Record<string, Value | null>): Record<string, unknown> => {
  const out = Object.create(null) as Record<string, unknown>;
  for (const [name, v] of Object.entries(attrs)) out[name] = v === null ? null : { type: 'Property', value: v };
  return out;
};

/** A JSON object text with `members` in order: `__proto__` stays a member (an object literal would make it the prototype). */
function objectText(members: Record<string, unknown>): string {
  return (
    '{' +
    Object.keys(members)
      .map((k) => `${JSON.stringify(k)}:${JSON.stringify(members[k])}`)
      .join(',') +
    '}'
  );
}

function entityText(e: number, attrs: Record<string, Value | null>, withType = true): string {
  const head: Record<string, unknown> = { id: entityId(e) };
  if (withType) head.type = ENTITY_TYPE;
  return objectText({ ...head, ...normalized(attrs) });
}

export function requestOf(op: Op): Request {
  const id = (n: number): string => encodeURIComponent(entityId(n));
  switch (op.kind) {
    case 'create':
      return { method: 'POST', path: '/entities', body: entityText(op.e, op.attrs) };
    case 'replace':
      return { method: 'PUT', path: `/entities/${id(op.e)}`, body: entityText(op.e, op.attrs) };
    case 'append':
      return {
        method: 'POST',
        path: `/entities/${id(op.e)}/attrs${op.noOverwrite ? '?options=noOverwrite' : ''}`,
        body: objectText(normalized(op.attrs)),
      };
    case 'update':
      return { method: 'PATCH', path: `/entities/${id(op.e)}/attrs`, body: objectText(normalized(op.attrs)) };
    case 'merge':
      return { method: 'PATCH', path: `/entities/${id(op.e)}`, body: objectText(normalized(op.attrs)) };
    case 'deleteAttr':
      return { method: 'DELETE', path: `/entities/${id(op.e)}/attrs/${encodeURIComponent(op.name)}` };
    case 'delete':
      return { method: 'DELETE', path: `/entities/${id(op.e)}` };
    case 'upsert':
      return {
        method: 'POST',
        path: `/entityOperations/upsert${op.update ? '?options=update' : ''}`,
        body: `[${op.entries.map((x) => entityText(x.e, x.attrs)).join(',')}]`,
      };
    case 'batchDelete':
      return { method: 'POST', path: '/entityOperations/delete', body: JSON.stringify(op.es.map(entityId)) };
    case 'invalid':
      return invalidRequestOf(op);
  }
}

function invalidRequestOf(op: Extract<Op, { kind: 'invalid' }>): Request {
  const valid = requestOf(
    op.base === 'append' ? { kind: 'append', e: op.e, attrs: op.attrs, noOverwrite: false } : { kind: op.base, e: op.e, attrs: op.attrs },
  );
  const whole = op.base === 'create' || op.base === 'replace';
  const members = (extra: Record<string, unknown>): string => {
    const m: Record<string, unknown> = whole ? { id: entityId(op.e), type: ENTITY_TYPE } : {};
    return objectText({ ...m, ...normalized(op.attrs), ...extra });
  };
  let body: string;
  let contentType: string | undefined;
  switch (op.bad) {
    case 'forbiddenName':
      body = members({ 'bad name(1)': { type: 'Property', value: 1 } });
      break;
    case 'bogusType':
      body = members({ bogus: { type: 'Bogus', value: 1 } });
      break;
    case 'tooDeep':
      body = members({ deep: { type: 'Property', value: JSON.parse('{"x":'.repeat(70) + '1' + '}'.repeat(70)) } });
      break;
    case 'loneSurrogate':
      body = members({}).replace(/}$/, ',"sur":{"type":"Property","value":"x\\ud800y"}}');
      break;
    case 'array':
      body = `[${members({})}]`;
      break;
    case 'contextInJson':
      body = members({ '@context': 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld' });
      break;
    case 'typeNull':
      body = members({ type: null });
      break;
    case 'nullOnCreate':
      body = members({ gone: null });
      break;
    case 'noValue':
      body = members({ hollow: { type: 'Property' } });
      break;
    case 'badId':
      body = members({ id: 'not a uri' });
      break;
  }
  return { ...valid, body, contentType };
}

/** The status an operation must answer on the model, and the model after it (a refused operation changes nothing). */
export function apply(model: Model, op: Op): { status: number; next: Model } {
  const creating = op.kind === 'create' || op.kind === 'upsert' || (op.kind === 'invalid' && op.base === 'create');
  // The body is parsed (depth, Unicode) and its @context taken before the tenant is looked up.
  const refusedBeforeTenant = op.kind === 'invalid' && (op.bad === 'tooDeep' || op.bad === 'loneSurrogate' || op.bad === 'contextInJson');
  if (!model.tenantExists && !creating && !refusedBeforeTenant) return { status: 404, next: model };
  if (op.kind === 'invalid') return { status: 400, next: model };
  if (
    (op.kind === 'create' || op.kind === 'replace' || op.kind === 'append' || op.kind === 'update' || op.kind === 'merge') &&
    refused(op.attrs)
  )
    return { status: 400, next: model };
  const entities = new Map([...model.entities].map(([k, v]) => [k, new Map(v)]));
  const { status, changed } = applyTo(entities, op);
  if (!changed) return { status, next: model };
  return { status, next: { tenantExists: true, entities } };
}

function applyTo(next: Map<string, Map<string, Value>>, op: Exclude<Op, { kind: 'invalid' }>): { status: number; changed: boolean } {
  const id = (n: number): string => entityId(n);
  switch (op.kind) {
    case 'create':
      if (next.has(id(op.e))) return { status: 409, changed: false };
      next.set(id(op.e), new Map(Object.entries(op.attrs)));
      return { status: 201, changed: true };
    case 'replace':
      if (!next.has(id(op.e))) return { status: 404, changed: false };
      next.set(id(op.e), new Map(Object.entries(op.attrs)));
      return { status: 204, changed: true };
    case 'append': {
      const ent = next.get(id(op.e));
      if (ent === undefined) return { status: 404, changed: false };
      let kept = 0;
      for (const [k, v] of Object.entries(op.attrs)) {
        if (op.noOverwrite && ent.has(k)) kept++;
        else ent.set(k, v);
      }
      return { status: kept > 0 ? 207 : 204, changed: true };
    }
    case 'update': {
      const ent = next.get(id(op.e));
      if (ent === undefined) return { status: 404, changed: false };
      let missing = 0;
      for (const [k, v] of Object.entries(op.attrs)) {
        if (ent.has(k)) ent.set(k, v);
        else missing++;
      }
      return { status: missing > 0 ? 207 : 204, changed: true };
    }
    case 'merge': {
      const ent = next.get(id(op.e));
      if (ent === undefined) return { status: 404, changed: false };
      for (const [k, v] of Object.entries(op.attrs)) {
        if (v === null) ent.delete(k);
        else ent.set(k, v);
      }
      return { status: 204, changed: true };
    }
    case 'deleteAttr': {
      const ent = next.get(id(op.e));
      if (ent === undefined || !ent.has(op.name)) return { status: 404, changed: false };
      ent.delete(op.name);
      return { status: 204, changed: true };
    }
    case 'delete':
      if (!next.delete(id(op.e))) return { status: 404, changed: false };
      return { status: 204, changed: true };
    case 'upsert': {
      let created = 0;
      let failed = 0;
      for (const x of op.entries) {
        // CIM 009 §5.6.8: an entry refused is that entry's error; the others are written.
        if (refused(x.attrs)) {
          failed++;
          continue;
        }
        const ent = next.get(id(x.e));
        if (ent === undefined) {
          created++;
          next.set(id(x.e), new Map(Object.entries(x.attrs)));
        } else if (op.update) {
          for (const [k, v] of Object.entries(x.attrs)) ent.set(k, v);
        } else {
          next.set(id(x.e), new Map(Object.entries(x.attrs)));
        }
      }
      return { status: failed > 0 ? 207 : created > 0 ? 201 : 204, changed: failed < op.entries.length };
    }
    case 'batchDelete': {
      let missing = 0;
      for (const n of op.es) if (!next.delete(id(n))) missing++;
      return { status: missing > 0 ? 207 : 204, changed: true };
    }
  }
}
