// The name rule of the migration stream (seed 001 §2.5, src/migrate/stream/STREAM.md "The name rule"): every name
// NGSI-LD expands is an absolute IRI or an NGSI-LD core term, since the importer expands nothing and takes no
// @context. A short name or a compact IRI refuses the record, naming the term. Port of broker_migration.py's
// name_violations and q_attribute_names.

const IRI = /^(?:https?:\/\/|urn:)[^\s]+$/;

/** Members of an entity that are not attributes, and of an instance that are not Sub-Attributes (build_schema.py). */
const ENTITY_MEMBERS: ReadonlySet<string> = new Set(['id', 'type', 'scope', 'createdAt', 'modifiedAt', 'deletedAt', 'expiresAt']);
const INSTANCE_MEMBERS: ReadonlySet<string> = new Set([
  'type',
  'value',
  'object',
  'languageMap',
  'vocab',
  'json',
  'valueList',
  'objectList',
  'objectType',
  'createdAt',
  'modifiedAt',
  'deletedAt',
  'observedAt',
  'unitCode',
  'datasetId',
  'instanceId',
  'lang',
]);

export interface NameViolation {
  where: string;
  name: unknown;
}

export class NameRule {
  constructor(private readonly coreTerms: ReadonlySet<string>) {}

  isExpanded(name: unknown): boolean {
    return typeof name === 'string' && (IRI.test(name) || this.coreTerms.has(name));
  }

  /** Every name of a record's data that is not expanded, where it is; empty when the record keeps the rule. */
  violations(kind: string, data: Record<string, unknown>): NameViolation[] {
    const out: NameViolation[] = [];
    const check = (name: unknown, where: string): void => {
      if (!this.isExpanded(name)) out.push({ where, name });
    };
    const instance = (inst: unknown, where: string): void => {
      if (!isObject(inst)) return;
      if (inst.type === 'VocabProperty' && inst.vocab !== undefined)
        for (const v of Array.isArray(inst.vocab) ? inst.vocab : [inst.vocab]) check(v, `${where}.vocab`);
      for (const key of Object.keys(inst)) {
        if (INSTANCE_MEMBERS.has(key)) continue;
        check(key, `${where} sub-attribute`);
        const sub = inst[key];
        for (const s of Array.isArray(sub) ? sub : [sub]) instance(s, `${where}.${key}`);
      }
    };
    const selectors = (list: unknown, where: string): void => {
      if (!Array.isArray(list)) return;
      list.forEach((sel, i) => {
        if (isObject(sel) && 'type' in sel) check(sel.type, `${where}[${i}].type`);
      });
    };
    const names = (list: unknown, where: string): void => {
      if (Array.isArray(list)) for (const a of list) check(a, where);
    };
    switch (kind) {
      case 'entity':
        for (const t of Array.isArray(data.type) ? data.type : [data.type]) check(t, 'entity type');
        for (const key of Object.keys(data)) {
          if (ENTITY_MEMBERS.has(key)) continue;
          check(key, 'attribute name');
          const attr = data[key];
          for (const inst of Array.isArray(attr) ? attr : [attr]) instance(inst, key);
        }
        break;
      case 'subscription': {
        selectors(data.entities, 'entities');
        names(data.watchedAttributes, 'watchedAttributes');
        if (isObject(data.notification)) names(data.notification.attributes, 'notification.attributes');
        if (typeof data.q === 'string') for (const name of qAttributeNames(data.q)) check(name, 'q');
        break;
      }
      case 'registration':
        if (Array.isArray(data.information))
          data.information.forEach((info, i) => {
            if (!isObject(info)) return;
            selectors(info.entities, `information[${i}].entities`);
            names(info.propertyNames, `information[${i}].propertyNames`);
            names(info.relationshipNames, `information[${i}].relationshipNames`);
          });
        break;
      case 'temporalEntity':
        check(data.type, 'type');
        break;
      case 'temporalInstance':
        check(data.type, 'type');
        check(data.attr, 'attr');
        instance(data.instance, 'instance');
        break;
    }
    return out;
  }
}

const Q_OPERATOR = /==|!=|>=|<=|~=|!~=|>|</y;

/**
 * The attribute and Sub-Attribute names a q uses (STREAM.md): a path runs from a term start to an operator, a term
 * end or the end; `[...]` and what follows is a path into a compound value (not checked); a `.` separates an attribute
 * from its Sub-Attribute, and `%2E` is a dot of an IRI.
 */
export function qAttributeNames(q: string): string[] {
  const names: string[] = [];
  const opAt = (j: number): string | undefined => {
    Q_OPERATOR.lastIndex = j;
    return Q_OPERATOR.exec(q)?.[0];
  };
  let i = 0;
  const n = q.length;
  while (i < n) {
    if ('()!;|'.includes(q[i]!)) {
      i++;
      continue;
    }
    let j = i;
    while (j < n && !';|()'.includes(q[j]!) && opAt(j) === undefined) j++;
    let path = q.slice(i, j);
    const bracket = path.indexOf('[');
    if (bracket >= 0) path = path.slice(0, bracket);
    for (const part of path.split('.')) if (part !== '') names.push(part.replace(/%2E/gi, '.'));
    const op = j < n ? opAt(j) : undefined;
    if (op !== undefined) {
      j += op.length;
      let inString = false;
      while (j < n) {
        const c = q[j]!;
        if (c === '"') inString = !inString;
        else if (!inString && ';|)'.includes(c)) break;
        j++;
      }
    }
    i = j;
  }
  return names;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
