// The temporal evolution of an entity as a history keeps it (CIM 009 v1.8 §4.5.7, §5.5): attribute instances with
// their identity and system times, what is known of the entity as a whole, and time windows on a time property.
// The store contract's History (src/store/contract.ts) stores and answers these.
import type { AttrInstance } from '../entity/model.js';

export type TimeProperty = 'observedAt' | 'createdAt' | 'modifiedAt' | 'deletedAt';

/** One stored attribute instance of the history: the attribute instance plus its identity and system times. */
export interface HistoryInstance extends AttrInstance {
  instanceId: string;
  createdAt: string;
  modifiedAt: string;
  /** Tombstones only: the value member is `urn:ngsi-ld:null`. */
  deletedAt?: string;
}

/** What the history knows of an entity as a whole (kept after the entity is deleted). */
export interface TemporalEntityRecord {
  id: string;
  type: string[];
  scope?: string[];
  createdAt: string;
  /** The last change of the entity as a whole (created, types or scope, deleted); instances carry their own times. */
  modifiedAt: string;
  deletedAt?: string;
}

/** A time window on one time property: `from` inclusive, `to` exclusive, in ms since the epoch. */
export interface TimeWindow {
  timeproperty: TimeProperty;
  from?: number;
  to?: number;
}
