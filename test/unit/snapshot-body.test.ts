// The Snapshot data type as a client sends it (CIM 009 v1.9.1 §5.2.41; member names of the v1.9 core @context), as
// the broker answers it and sums up its status (§5.16.1.4), and the entity space of a Snapshot (ngsild/snapshot/).
import t from 'tap';
import { LdError } from '../../src/ngsild/problem.js';
import {
  MAX_SNAPSHOT_QUERIES,
  expiresAtOf,
  isExpired,
  parseSnapshotBody,
  renderSnapshot,
  snapshotAsQTarget,
  statusOf,
  type SnapshotDoc,
} from '../../src/ngsild/snapshot/snapshot-body.js';
import { isSnapshotSpace, newSpaceKey, snapshotSpace } from '../../src/ngsild/snapshot/snapshot-store.js';
import { isTenantName, parseTenant } from '../../src/ngsild/tenant.js';
import { parseQ } from '../../src/ngsild/query/q-parser.js';
import { compileQ } from '../../src/ngsild/query/q-eval.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';

const Q = [{ type: 'Query', entities: [{ type: 'Building' }] }];
const TQ = [{ type: 'Query', entities: [{ type: 'Building' }], temporalQ: { timerel: 'after', timeAt: '2026-01-01T00:00:00Z' } }];
const kindOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (e) {
    return e instanceof LdError ? e.kind : 'not an LdError';
  }
};

t.test('a create takes type Snapshot, one query list at least, an optional id, lifetime and priority', async (t) => {
  t.same(parseSnapshotBody({ type: 'Snapshot', snapshotQueries: Q }, 'create'), { snapshotQueries: Q });
  t.same(parseSnapshotBody({ type: 'Snapshot', snapshotTemporalQueries: TQ }, 'create'), { snapshotTemporalQueries: TQ });
  t.same(
    parseSnapshotBody(
      { id: 'urn:x:s', type: 'Snapshot', snapshotQueries: Q, snapshotLifetime: 'PT1H', snapshotPriority: 3, '@context': 'x' },
      'create',
    ),
    { id: 'urn:x:s', snapshotQueries: Q, snapshotLifetime: 'PT1H', snapshotPriority: 3 },
  );
  t.equal(
    kindOf(() => parseSnapshotBody({ snapshotQueries: Q }, 'create')),
    'BadRequestData',
    'type is required',
  );
  t.equal(
    kindOf(() => parseSnapshotBody({ type: 'Query', snapshotQueries: Q }, 'create')),
    'BadRequestData',
  );
  t.equal(
    kindOf(() => parseSnapshotBody({ type: 'Snapshot' }, 'create')),
    'BadRequestData',
    'a query list is required',
  );
  t.equal(
    kindOf(() => parseSnapshotBody({ id: 'no uri', type: 'Snapshot', snapshotQueries: Q }, 'create')),
    'BadRequestData',
  );
  t.equal(
    kindOf(() => parseSnapshotBody({ id: 'urn:x:' + 'a'.repeat(3000), type: 'Snapshot', snapshotQueries: Q }, 'create')),
    'BadRequestData',
  );
  for (const lifetime of ['1 day', 'P', 5, null])
    t.equal(
      kindOf(() => parseSnapshotBody({ type: 'Snapshot', snapshotQueries: Q, snapshotLifetime: lifetime }, 'create')),
      'BadRequestData',
    );
  for (const priority of [0, 11, 2.5, '5', null])
    t.equal(
      kindOf(() => parseSnapshotBody({ type: 'Snapshot', snapshotQueries: Q, snapshotPriority: priority }, 'create')),
      'BadRequestData',
    );
});

t.test('output-only members are ignored; endpoint and receiverInfo are not served', async (t) => {
  for (const member of [
    'snapshotStatus',
    'snapshotQueriesDetails',
    'snapshotTemporalQueriesDetails',
    'createdAt',
    'modifiedAt',
    'expiresAt',
    'lastUsedAt',
  ])
    t.same(parseSnapshotBody({ type: 'Snapshot', snapshotQueries: Q, [member]: 'x' }, 'create'), { snapshotQueries: Q }, member);
  for (const member of ['endpoint', 'receiverInfo'])
    t.equal(
      kindOf(() => parseSnapshotBody({ type: 'Snapshot', snapshotQueries: Q, [member]: 'x' }, 'create')),
      'OperationNotSupported',
      member,
    );
  t.equal(
    kindOf(() => parseSnapshotBody({ type: 'Snapshot', snapshotQueries: Q, foo: 1 }, 'create')),
    'BadRequestData',
    'unknown',
  );
});

t.test('an update and a clone take no queries; an update takes no id and null removes', async (t) => {
  t.same(parseSnapshotBody({ snapshotLifetime: null, snapshotPriority: null }, 'update'), {
    snapshotLifetime: null,
    snapshotPriority: null,
  });
  t.same(parseSnapshotBody({ type: 'Snapshot' }, 'update'), {});
  t.equal(
    kindOf(() => parseSnapshotBody({ id: 'urn:x:s' }, 'update')),
    'BadRequestData',
  );
  t.equal(
    kindOf(() => parseSnapshotBody({ snapshotQueries: Q }, 'update')),
    'BadRequestData',
  );
  t.same(parseSnapshotBody({ id: 'urn:x:c', snapshotPriority: 2 }, 'clone'), { id: 'urn:x:c', snapshotPriority: 2 });
  t.equal(
    kindOf(() => parseSnapshotBody({ snapshotTemporalQueries: TQ }, 'clone')),
    'BadRequestData',
  );
  t.equal(
    kindOf(() => parseSnapshotBody({ snapshotPriority: null }, 'clone')),
    'BadRequestData',
    'null only removes in an update',
  );
});

t.test('queries: non-empty lists of Query objects each selecting something, temporalQ in the temporal ones only', async (t) => {
  const body = (snapshotQueries: unknown) => ({ type: 'Snapshot', snapshotQueries });
  t.equal(
    kindOf(() => parseSnapshotBody(body([]), 'create')),
    'BadRequestData',
  );
  t.equal(
    kindOf(() => parseSnapshotBody(body({}), 'create')),
    'BadRequestData',
  );
  t.equal(
    kindOf(() => parseSnapshotBody(body([null]), 'create')),
    'BadRequestData',
  );
  t.equal(
    kindOf(() => parseSnapshotBody(body([{ entities: [{ type: 'A' }] }]), 'create')),
    'BadRequestData',
    'type Query',
  );
  t.equal(
    kindOf(() => parseSnapshotBody(body([{ type: 'Query' }]), 'create')),
    'BadRequestData',
    'selecting nothing in particular',
  );
  t.equal(
    kindOf(() => parseSnapshotBody(body(TQ), 'create')),
    'BadRequestData',
    'temporalQ in snapshotQueries',
  );
  t.equal(
    kindOf(() => parseSnapshotBody({ type: 'Snapshot', snapshotTemporalQueries: Q }, 'create')),
    'BadRequestData',
    'none in temporal',
  );
  for (const member of ['entities', 'q', 'geoQ', 'scopeQ'])
    t.equal(
      kindOf(() => parseSnapshotBody(body([{ type: 'Query', [member]: 'x' }]), 'create')),
      undefined,
      `${member} selects`,
    );
  const half = Array.from({ length: MAX_SNAPSHOT_QUERIES / 2 }, () => Q[0]);
  const halfT = Array.from({ length: MAX_SNAPSHOT_QUERIES / 2 }, () => TQ[0]);
  t.equal(
    kindOf(() => parseSnapshotBody({ type: 'Snapshot', snapshotQueries: half, snapshotTemporalQueries: halfT }, 'create')),
    undefined,
  );
  t.equal(
    kindOf(() => parseSnapshotBody({ type: 'Snapshot', snapshotQueries: [...half, Q[0]], snapshotTemporalQueries: halfT }, 'create')),
    'TooManyResults',
    `more than ${MAX_SNAPSHOT_QUERIES} queries in both lists`,
  );
});

t.test('the status sums up the queries (§5.16.1.4)', async (t) => {
  const r = (resultStatus: 'success' | 'empty' | 'failure') => ({ resultStatus });
  t.equal(statusOf([r('success'), r('success')]), 'success');
  t.equal(statusOf([r('success'), r('empty')]), 'partial');
  t.equal(statusOf([r('success'), r('failure')]), 'partial');
  t.equal(statusOf([r('empty'), r('empty')]), 'empty');
  t.equal(statusOf([r('empty'), r('failure')]), 'empty');
  t.equal(statusOf([r('failure'), r('failure')]), 'failure');
});

const doc: SnapshotDoc = {
  id: 'urn:x:s',
  snapshotQueries: Q,
  storageKey: 'k',
  snapshotPriority: 5,
  snapshotStatus: 'success',
  snapshotQueriesDetails: [{ resultStatus: 'success' }],
  createdAt: '2026-01-01T00:00:00.000Z',
  modifiedAt: '2026-01-02T00:00:00.000Z',
};

t.test('the answer names its members, never where the entities are kept; lifetimes and expiry', async (t) => {
  t.same(renderSnapshot(doc), {
    id: 'urn:x:s',
    type: 'Snapshot',
    snapshotStatus: 'success',
    snapshotQueries: Q,
    snapshotQueriesDetails: [{ resultStatus: 'success' }],
    snapshotPriority: 5,
    createdAt: '2026-01-01T00:00:00.000Z',
    modifiedAt: '2026-01-02T00:00:00.000Z',
  });
  const from = Date.parse('2026-01-31T00:00:00Z');
  t.equal(expiresAtOf('P1M', from), '2026-02-28T00:00:00.000Z', 'calendar months');
  t.equal(expiresAtOf('PT90S', from), '2026-01-31T00:01:30.000Z');
  t.equal(expiresAtOf(undefined, from), undefined);
  t.notOk(isExpired(doc, Date.now()), 'no expiresAt: never');
  t.ok(isExpired({ ...doc, expiresAt: '2026-01-01T00:00:00Z' }, Date.parse('2026-01-01T00:00:00Z')), 'at expiresAt: expired');
  t.notOk(isExpired({ ...doc, expiresAt: '2026-01-01T00:00:01Z' }, Date.parse('2026-01-01T00:00:00Z')));
});

t.test('a purge q reads the Snapshot members as properties', async (t) => {
  const target = snapshotAsQTarget({ ...doc, snapshotPriority: 2 }) as unknown as StoredEntity;
  const holds = (q: string) => compileQ(parseQ(q), (term) => term)(target);
  t.ok(holds('snapshotPriority<3'));
  t.notOk(holds('snapshotPriority>3'));
  t.ok(holds('snapshotStatus=="success"'));
  t.notOk(holds('snapshotStatus=="failure"'));
  t.notOk(holds('snapshotLifetime'), 'a member it lacks');
});

t.test("a Snapshot's entity space is a store tenant no request can name, and every store can hold", async (t) => {
  const space = snapshotSpace(newSpaceKey());
  t.ok(isSnapshotSpace(space), `${space} is a Snapshot's`);
  t.notOk(isTenantName(space), 'no tenant name');
  t.not(parseTenant(space), space, 'NGSILD-Tenant cannot give it (read in lower case)');
  t.match(space, /^[A-Za-z0-9_]{1,50}$/, 'as short as a tenant name, of characters every store takes in a tenant');
  t.notOk(isSnapshotSpace('t1'));
  t.notOk(isSnapshotSpace(parseTenant('Snapshot_abc')), 'not even when a client writes it');
  t.not(snapshotSpace(newSpaceKey()), snapshotSpace(newSpaceKey()), 'one space per key');
});
