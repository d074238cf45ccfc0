// Every implemented operation's handler, by LdOp. A route of the table without a handler answers 501. Entity writes
// go to registered context sources too (forward/write.ts).
import { relaySubordinateNotification } from './subordinate-notify.js';
import { LdOp } from '../ngsild/operations.js';
import type { OpHandler } from '../pipeline/handler.js';
import {
  createEntity,
  retrieveEntity,
  deleteEntity,
  replaceEntityOp,
  mergeEntityOp,
  appendAttrs,
  updateAttrs,
  partialAttrUpdate,
  deleteAttr,
  replaceAttr,
} from './entities.js';
import { queryEntities, queryPost } from './query.js';
import { listTypes, retrieveType } from './types.js';
import { listAttributes, retrieveAttribute } from './attributes.js';
import { createContext, listContexts, retrieveContext, deleteContext } from './contexts.js';
import {
  createSubscription,
  querySubscriptions,
  retrieveSubscription,
  updateSubscription,
  deleteSubscription,
  deleteConnectionSubscriptions,
} from './subscriptions.js';
import { createRegistration, queryRegistrations, retrieveRegistration, updateRegistration, deleteRegistration } from './registrations.js';
import { batchCreate, batchUpsert, batchUpdate, batchDelete, batchMerge } from './batch.js';
import { inSlot } from './batch-slots.js';
import { brokerVersion } from './version.js';
import { listChannels } from './channels.js';
import { sourceIdentity } from './source-identity.js';
import {
  createCsourceSubscription,
  queryCsourceSubscriptions,
  retrieveCsourceSubscription,
  updateCsourceSubscription,
  deleteCsourceSubscription,
} from './csource-subscriptions.js';
import { distributedWrite } from './forward/write.js';
import { distributedBatch } from './forward/batch.js';
import { distributedPurge } from './forward/purge.js';
import { distributedTemporalQuery, distributedTemporalRetrieve } from './forward/temporal.js';
import { attributeShape, createShape, entityShape, fragmentShape } from './forward/write-shapes.js';
import { purgeEntities } from './purge.js';
import { deleteEntityMap, retrieveEntityMap, updateEntityMap } from './entity-maps.js';
import { createEntityMap } from './entity-map-create.js';
import { createSnapshot, cloneSnapshot, retrieveSnapshot, updateSnapshot, deleteSnapshot, purgeSnapshots } from './snapshots.js';

import {
  temporalQuery,
  temporalQueryPost,
  temporalRetrieve,
  temporalCreate,
  temporalDelete,
  temporalAppendAttrs,
  temporalDeleteAttr,
  temporalUpdateInstance,
  temporalDeleteInstance,
} from './temporal.js';

export const handlers: ReadonlyMap<LdOp, OpHandler> = new Map<LdOp, OpHandler>([
  [LdOp.TemporalQuery, distributedTemporalQuery(temporalQuery)],
  [LdOp.TemporalQueryPost, temporalQueryPost],
  [LdOp.TemporalRetrieve, distributedTemporalRetrieve(temporalRetrieve)],
  [LdOp.TemporalCreate, temporalCreate],
  [LdOp.TemporalDelete, temporalDelete],
  [LdOp.TemporalAppendAttrs, temporalAppendAttrs],
  [LdOp.TemporalDeleteAttr, temporalDeleteAttr],
  [LdOp.TemporalUpdateInstance, temporalUpdateInstance],
  [LdOp.TemporalDeleteInstance, temporalDeleteInstance],
  [LdOp.CreateEntity, distributedWrite('createEntity', createEntity, createShape)],
  [LdOp.RetrieveEntity, retrieveEntity],
  [LdOp.DeleteEntity, distributedWrite('deleteEntity', deleteEntity, entityShape)],
  [LdOp.ReplaceEntity, distributedWrite('replaceEntity', replaceEntityOp, fragmentShape)],
  [LdOp.MergeEntity, distributedWrite('mergeEntity', mergeEntityOp, fragmentShape)],
  [LdOp.AppendAttrs, distributedWrite('appendAttrs', appendAttrs, fragmentShape)],
  [LdOp.UpdateAttrs, distributedWrite('updateAttrs', updateAttrs, fragmentShape)],
  [LdOp.PartialAttrUpdate, distributedWrite('updateAttrs', partialAttrUpdate, attributeShape(true))],
  [LdOp.DeleteAttr, distributedWrite('deleteAttrs', deleteAttr, attributeShape(false))],
  [LdOp.ReplaceAttr, distributedWrite('replaceAttrs', replaceAttr, attributeShape(true))],
  [LdOp.BatchCreate, distributedBatch('createBatch', inSlot(batchCreate))],
  [LdOp.BatchUpsert, distributedBatch('upsertBatch', inSlot(batchUpsert))],
  [LdOp.BatchUpdate, distributedBatch('updateBatch', inSlot(batchUpdate))],
  [LdOp.BatchDelete, distributedBatch('deleteBatch', inSlot(batchDelete))],
  [LdOp.BatchMerge, distributedBatch('mergeBatch', inSlot(batchMerge))],
  [LdOp.QueryEntities, queryEntities],
  [LdOp.PurgeEntities, distributedPurge(purgeEntities)],
  [LdOp.QueryPost, queryPost],
  [LdOp.ListTypes, listTypes],
  [LdOp.RetrieveType, retrieveType],
  [LdOp.ListAttributes, listAttributes],
  [LdOp.RetrieveAttribute, retrieveAttribute],
  [LdOp.CreateContext, createContext],
  [LdOp.ListContexts, listContexts],
  [LdOp.RetrieveContext, retrieveContext],
  [LdOp.DeleteContext, deleteContext],
  [LdOp.CreateSubscription, createSubscription],
  [LdOp.QuerySubscriptions, querySubscriptions],
  [LdOp.RetrieveSubscription, retrieveSubscription],
  [LdOp.UpdateSubscription, updateSubscription],
  [LdOp.DeleteSubscription, deleteSubscription],
  [LdOp.DeleteConnectionSubscriptions, deleteConnectionSubscriptions],
  [LdOp.CreateRegistration, createRegistration],
  [LdOp.QueryRegistrations, queryRegistrations],
  [LdOp.RetrieveRegistration, retrieveRegistration],
  [LdOp.UpdateRegistration, updateRegistration],
  [LdOp.DeleteRegistration, deleteRegistration],
  [LdOp.CreateCsourceSubscription, createCsourceSubscription],
  [LdOp.QueryCsourceSubscriptions, queryCsourceSubscriptions],
  [LdOp.RetrieveCsourceSubscription, retrieveCsourceSubscription],
  [LdOp.UpdateCsourceSubscription, updateCsourceSubscription],
  [LdOp.DeleteCsourceSubscription, deleteCsourceSubscription],
  [LdOp.RetrieveEntityMap, retrieveEntityMap],
  [LdOp.UpdateEntityMap, updateEntityMap],
  [LdOp.DeleteEntityMap, deleteEntityMap],
  [LdOp.SourceIdentity, sourceIdentity],
  [LdOp.Version, brokerVersion],
  [LdOp.ListChannels, listChannels],
  [LdOp.CreateSnapshot, createSnapshot],
  [LdOp.CloneSnapshot, cloneSnapshot],
  [LdOp.RetrieveSnapshot, retrieveSnapshot],
  [LdOp.UpdateSnapshot, updateSnapshot],
  [LdOp.DeleteSnapshot, deleteSnapshot],
  [LdOp.PurgeSnapshots, purgeSnapshots],
  [LdOp.CreateEntityMap, createEntityMap],
  [LdOp.RelaySubordinateNotification, relaySubordinateNotification],
]);
