// The Snapshot data type as a client sends it (CIM 009 v1.9.1 §4.3.7; member names of the v1.9 core @context) and
// as the broker answers it; the entity space of a Snapshot (ngsild/snapshot/).
import t from 'tap';
import { LdError } from '../../src/ngsild/problem.js';
import { MAX_SNAPSHOT_QUERIES, parseSnapshotBody, renderSnapshot, type SnapshotDoc } from '../../src/ngsild/snapshot/snapshot-body.js';
import { isSnapshotSpace, snapshotSpace } from '../../src/ngsild/snapshot/snapshot-store.js';
import { isTenantName, parseTenant } from '../../src/ngsild/tenant.js';

const Q = [{ type: 'Query', entities: [{ type: 'Building' }] }];
const kindOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (e) {
    return e instanceof LdError ? e.kind : 'not an LdError';
  }
};

t.test('a create takes type Snapshot, snapshotQueries and an optional id', async (t) => {
  t.same(parseSnapshotBody({ type: 'Snapshot', snapshotQueries: Q }, true), { snapshotQueries: Q });
  t.same(parseSnapshotBody({ id: 'urn:x:s', type: 'Snapshot', snapshotQueries: Q, '@context': 'x' }, true), {
    id: 'urn:x:s',
    snapshotQueries: Q,
  });
  t.equal(
    kindOf(() => parseSnapshotBody({ snapshotQueries: Q }, true)),
    'BadRequestData',
    'type is required',
  );
  t.equal(
    kindOf(() => parseSnapshotBody({ type: 'Query', snapshotQueries: Q }, true)),
    'BadRequestData',
  );
  t.equal(
    kindOf(() => parseSnapshotBody({ type: 'Snapshot' }, true)),
    'BadRequestData',
    'queries are required',
  );
  t.equal(
    kindOf(() => parseSnapshotBody({ id: 'no uri', type: 'Snapshot', snapshotQueries: Q }, true)),
    'BadRequestData',
  );
  t.equal(
    kindOf(() => parseSnapshotBody({ id: 'urn:x:' + 'a'.repeat(3000), type: 'Snapshot', snapshotQueries: Q }, true)),
    'BadRequestData',
  );
});

t.test('an update takes new snapshotQueries, never a new id', async (t) => {
  t.same(parseSnapshotBody({ snapshotQueries: Q }, false), { snapshotQueries: Q });
  t.same(parseSnapshotBody({ type: 'Snapshot' }, false), {});
  t.equal(
    kindOf(() => parseSnapshotBody({ id: 'urn:x:s' }, false)),
    'BadRequestData',
  );
});

t.test('queries: a non-empty list of Query objects each selecting something, at most MAX_SNAPSHOT_QUERIES', async (t) => {
  const body = (snapshotQueries: unknown) => ({ type: 'Snapshot', snapshotQueries });
  t.equal(
    kindOf(() => parseSnapshotBody(body([]), true)),
    'BadRequestData',
  );
  t.equal(
    kindOf(() => parseSnapshotBody(body({}), true)),
    'BadRequestData',
  );
  t.equal(
    kindOf(() => parseSnapshotBody(body([null]), true)),
    'BadRequestData',
  );
  t.equal(
    kindOf(() => parseSnapshotBody(body([{ type: 'Query' }]), true)),
    'BadRequestData',
    'a query selecting nothing in particular',
  );
  for (const member of ['entities', 'q', 'geoQ', 'scopeQ'])
    t.equal(
      kindOf(() => parseSnapshotBody(body([{ [member]: 'x' }]), true)),
      undefined,
      `${member} selects`,
    );
  const most = Array.from({ length: MAX_SNAPSHOT_QUERIES }, () => ({ q: 'a==1' }));
  t.equal(
    kindOf(() => parseSnapshotBody(body(most), true)),
    undefined,
    `${MAX_SNAPSHOT_QUERIES} queries`,
  );
  t.equal(
    kindOf(() => parseSnapshotBody(body([...most, { q: 'a==1' }]), true)),
    'TooManyResults',
    'one more',
  );
});

t.test('read-only members are refused; members this broker does not serve say so', async (t) => {
  for (const member of ['snapshotStatus', 'snapshotQueriesDetails', 'createdAt', 'modifiedAt'])
    t.equal(
      kindOf(() => parseSnapshotBody({ type: 'Snapshot', snapshotQueries: Q, [member]: 'x' }, true)),
      'BadRequestData',
      member,
    );
  for (const member of ['snapshotTemporalQueries', 'snapshotLifetime', 'snapshotPriority'])
    t.equal(
      kindOf(() => parseSnapshotBody({ type: 'Snapshot', snapshotQueries: Q, [member]: 1 }, true)),
      'OperationNotSupported',
      member,
    );
  t.equal(
    kindOf(() => parseSnapshotBody({ type: 'Snapshot', snapshotQueries: Q, foo: 1 }, true)),
    'BadRequestData',
    'unknown',
  );
});

t.test('the answer names its members, never where the entities are kept', async (t) => {
  const doc: SnapshotDoc = {
    id: 'urn:x:s',
    snapshotQueries: Q,
    storageKey: 'k',
    snapshotStatus: 'ready',
    snapshotQueriesDetails: [{ resultStatus: 'empty' }],
    createdAt: '2026-01-01T00:00:00Z',
    modifiedAt: '2026-01-02T00:00:00Z',
  };
  t.same(renderSnapshot(doc), {
    id: 'urn:x:s',
    type: 'Snapshot',
    snapshotStatus: 'ready',
    snapshotQueries: Q,
    snapshotQueriesDetails: [{ resultStatus: 'empty' }],
    createdAt: '2026-01-01T00:00:00Z',
    modifiedAt: '2026-01-02T00:00:00Z',
  });
});

t.test("a Snapshot's entity space is a store tenant no request can name", async (t) => {
  for (const tenant of ['', 't1']) {
    const space = snapshotSpace(tenant, 'k');
    t.ok(isSnapshotSpace(space), `${space} is a Snapshot's`);
    t.notOk(isTenantName(space), 'no tenant name');
    t.throws(() => parseTenant(space), 'NGSILD-Tenant cannot give it');
    t.notOk(/[\u0000-\u0004]/.test(space), 'a store key part (no character <= 4)');
  }
  t.notOk(isSnapshotSpace('t1'));
  t.not(snapshotSpace('t1', 'k'), snapshotSpace('t1', 'j'), 'one space per key');
});
