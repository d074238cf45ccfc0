// The stored entity model: NGSI-LD's normalized form with every name expanded (the same shape as the
// broker-migration stream's `entity` record, seed 001 §2.5), so storage, history and migration share one model.

/** Attribute types of CIM 009 v1.8 §4.5. */
export type AttrType =
  'Property' | 'Relationship' | 'GeoProperty' | 'LanguageProperty' | 'VocabProperty' | 'JsonProperty' | 'ListProperty' | 'ListRelationship';

export const ATTR_TYPES: ReadonlySet<string> = new Set<AttrType>([
  'Property',
  'Relationship',
  'GeoProperty',
  'LanguageProperty',
  'VocabProperty',
  'JsonProperty',
  'ListProperty',
  'ListRelationship',
]);

/** The member that carries the value of each attribute type. */
export const VALUE_MEMBER: Record<AttrType, string> = {
  Property: 'value',
  GeoProperty: 'value',
  Relationship: 'object',
  LanguageProperty: 'languageMap',
  VocabProperty: 'vocab',
  JsonProperty: 'json',
  ListProperty: 'valueList',
  ListRelationship: 'objectList',
};

/**
 * Core members of an attribute instance. Every other key of an instance is a sub-attribute named by its
 * expanded IRI (an absolute IRI always holds ':', a core member never does, so the two cannot collide).
 */
export const ATTR_CORE_MEMBERS: ReadonlySet<string> = new Set([
  'type',
  'value',
  'object',
  'objectType',
  'languageMap',
  'vocab',
  'json',
  'valueList',
  'objectList',
  'datasetId',
  'observedAt',
  'unitCode',
  'createdAt',
  'modifiedAt',
  'deletedAt',
  'instanceId',
  'previousValue',
  'previousObject',
  'previousLanguageMap',
  'previousVocab',
  'previousJson',
  'previousValueList',
  'previousObjectList',
  'lang',
  'entity',
]);

/** The members of an attribute instance other than its type: core members plus sub-attributes by expanded IRI. */
export interface AttrMembers {
  value?: unknown;
  object?: string | string[];
  objectType?: string | string[];
  languageMap?: Record<string, string | string[]>;
  vocab?: string | string[];
  json?: unknown;
  valueList?: unknown[];
  objectList?: unknown[];
  datasetId?: string;
  observedAt?: string;
  unitCode?: string;
  createdAt?: string;
  modifiedAt?: string;
  /** Sub-attributes, by expanded IRI: one instance each. */
  [subAttrIri: string]: unknown;
}

/** One instance of an attribute (or a sub-attribute). */
export interface AttrInstance extends AttrMembers {
  type: AttrType;
}

/**
 * A stored entity. `type` always an array of expanded type IRIs; every attribute an array of instances
 * (the default instance, without datasetId, first when present). Keys holding ':' are attributes.
 */
export interface StoredEntity {
  id: string;
  type: string[];
  scope?: string[];
  createdAt: string;
  modifiedAt: string;
  [attrIri: string]: unknown;
}

export const ENTITY_CORE_MEMBERS: ReadonlySet<string> = new Set([
  'id',
  'type',
  'scope',
  'createdAt',
  'modifiedAt',
  'deletedAt',
  'expiresAt',
]);

export function attrNamesOf(entity: StoredEntity): string[] {
  const names: string[] = [];
  for (const key in entity) if (!ENTITY_CORE_MEMBERS.has(key)) names.push(key);
  return names;
}

export function instancesOf(entity: StoredEntity, attrIri: string): AttrInstance[] | undefined {
  return entity[attrIri] as AttrInstance[] | undefined;
}
