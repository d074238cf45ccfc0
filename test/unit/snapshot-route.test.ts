// The routes of a Snapshot's entities (CIM 009 v1.9.1 §4.3.7; README "Snapshots"): `/snapshots/{snapshotId}` before
// an entity route names the operation of that route, with the Snapshot apart from its parameters.
import t from 'tap';
import { lookupRoute } from '../../src/front/router.js';
import { LdOp } from '../../src/ngsild/operations.js';

const P = '/ngsi-ld/v1';
const SNAP = encodeURIComponent('urn:ngsi-ld:Snapshot:s1');

t.test('entity routes below a Snapshot are the entity operations, the Snapshot apart', async (t) => {
  t.same(lookupRoute('GET', `${P}/snapshots/${SNAP}/entities/urn:x:1`), {
    kind: 'op',
    op: LdOp.RetrieveEntity,
    route: `${P}/snapshots/:snapshotId/entities/:entityId`,
    params: ['urn:x:1'],
    snapshot: 'urn:ngsi-ld:Snapshot:s1',
  });
  t.match(lookupRoute('GET', `${P}/snapshots/${SNAP}/entities`), { kind: 'op', op: LdOp.QueryEntities, params: [] });
  t.match(lookupRoute('POST', `${P}/snapshots/${SNAP}/entityOperations/query`), { kind: 'op', op: LdOp.QueryPost });
  t.match(lookupRoute('GET', `${P}/snapshots/${SNAP}/temporal/entities`), { kind: 'op', op: LdOp.TemporalQuery });
  t.match(lookupRoute('DELETE', `${P}/snapshots/${SNAP}/entities`), { kind: 'op', op: LdOp.PurgeEntities });
  t.match(lookupRoute('GET', `${P}/snapshots/${SNAP}/types`), { kind: 'op', op: LdOp.ListTypes });
});

t.test("the Snapshot's own routes stay its operations", async (t) => {
  t.match(lookupRoute('GET', `${P}/snapshots/${SNAP}`), { kind: 'op', op: LdOp.RetrieveSnapshot, params: ['urn:ngsi-ld:Snapshot:s1'] });
  t.notOk('snapshot' in (lookupRoute('GET', `${P}/snapshots/${SNAP}`) as object), 'no Snapshot selected');
  t.match(lookupRoute('POST', `${P}/snapshots/${SNAP}/clone`), { kind: 'op', op: LdOp.CloneSnapshot });
  t.match(lookupRoute('POST', `${P}/snapshots/${SNAP}/purge`), { kind: 'op', op: LdOp.PurgeSnapshot });
  t.match(lookupRoute('GET', `${P}/snapshots`), { kind: 'op', op: LdOp.QuerySnapshots });
});

t.test('what a Snapshot does not serve, or a path left incomplete', async (t) => {
  t.same(lookupRoute('POST', `${P}/snapshots/${SNAP}/subscriptions`), { kind: 'notFound' }, 'subscriptions are not a Snapshot’s');
  t.same(lookupRoute('GET', `${P}/snapshots/${SNAP}/jsonldContexts`), { kind: 'notFound' });
  t.same(lookupRoute('POST', `${P}/snapshots/${SNAP}/snapshots`), { kind: 'notFound' }, 'no Snapshot within a Snapshot');
  t.same(lookupRoute('GET', `${P}/snapshots//entities`), { kind: 'emptyParam', name: 'snapshotId' });
  t.same(lookupRoute('PATCH', `${P}/snapshots/${SNAP}/entities//attrs`), { kind: 'emptyParam', name: 'entityId' });
  t.match(lookupRoute('PUT', `${P}/snapshots/${SNAP}/entities`), { kind: 'badMethod' });
});
