// The sizes of ids and names (ngsild/entity/limits.ts, README "Limits"): the checks refuse one byte over each limit
// with a 400 naming it, count UTF-8 bytes (not characters), refuse lone surrogates and control characters an
// @context could put in a name; and with every part at its limit, in a 50-character tenant, each embdb key fits
// LMDB's 1978 bytes, so an entity and its history are written and found by every path.
import t, { type Test } from 'tap';
import { tempEmbdb } from './helpers/embdb.js';
import { writeKey } from 'ordered-binary';
import {
  MAX_ID_BYTES,
  MAX_INSTANCE_ID_BYTES,
  MAX_NAME_BYTES,
  checkIdSize,
  checkInstanceIdSize,
  checkNameSize,
  checkedNames,
} from '../../src/ngsild/entity/limits.js';
import { LdError } from '../../src/ngsild/problem.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { inBox, ofTypes } from './helpers/store-query.js';

/** A string of exactly `bytes` UTF-8 bytes: a prefix, then 'é' (2 bytes each), then ASCII to make up the rest. */
function ofBytes(prefix: string, bytes: number): string {
  let s = prefix;
  while (Buffer.byteLength(s) + 2 <= bytes) s += 'é';
  while (Buffer.byteLength(s) < bytes) s += 'a';
  return s;
}

function refused(t: Test, fn: () => unknown, detail: RegExp, what: string): void {
  try {
    fn();
    t.fail(`${what}: accepted`);
  } catch (error) {
    t.ok(error instanceof LdError, `${what}: an LdError`);
    const problem = (error as LdError).toProblem();
    t.equal(problem.status, 400, what);
    t.equal(problem.type, 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData', what);
    t.match(problem.detail, detail, `${what}: ${problem.detail}`);
  }
}

t.test('ids: up to MAX_ID_BYTES UTF-8 bytes; one more is a 400 naming the limit', async (t) => {
  t.equal(
    checkIdSize(ofBytes('urn:x:', MAX_ID_BYTES), 'id').length < MAX_ID_BYTES,
    true,
    'multi-byte characters: fewer characters than bytes',
  );
  t.ok(checkIdSize('urn:x:' + 'a'.repeat(MAX_ID_BYTES - 6), 'id'));
  refused(
    t,
    () => checkIdSize('urn:x:' + 'a'.repeat(MAX_ID_BYTES - 5), 'id'),
    /is 1025 bytes long; an id may be at most 1024 bytes \(UTF-8\)/,
    'ASCII, 1025 bytes',
  );
  // 342 characters, each 3 bytes: under the limit in characters, over it in bytes.
  refused(t, () => checkIdSize('中'.repeat(342), 'entities[1].id'), /^entities\[1\]\.id: .* 1026 bytes long/, 'CJK, 1026 bytes');
  refused(t, () => checkIdSize('urn:x:\ud800', 'id'), /unpaired UTF-16 surrogate/, 'a lone surrogate');
  t.ok(checkIdSize('urn:x:\ud83d\ude00', 'id'), 'a surrogate pair is a character');
});

t.test('names: the expanded IRI up to MAX_NAME_BYTES, without control characters', async (t) => {
  t.ok(checkNameSize(ofBytes('https://example.org/', MAX_NAME_BYTES), 'type'));
  refused(
    t,
    () => checkNameSize(ofBytes('https://example.org/', MAX_NAME_BYTES + 1), 'type'),
    /513 bytes long; a type or attribute name \(expanded\) may be at most 512 bytes/,
    '513 bytes',
  );
  refused(t, () => checkNameSize('https://example.org/a\u0000b', 'speed'), /control character/, 'a NUL an @context put in a name');
  refused(t, () => checkNameSize('https://example.org/a\u0004b', 'speed'), /control character/, 'a character ordered-binary escapes');
  const expand = checkedNames((term) => 'https://example.org/' + term, 'type');
  t.equal(expand('Car'), 'https://example.org/Car');
  refused(t, () => expand('T'.repeat(2000)), /^type: .* 2020 bytes long/, 'a query type of 2,000 characters');
  const longAt = 'n'.repeat(2000);
  refused(t, () => checkNameSize('https://example.org/' + longAt, longAt), /^n{57}\.\.\.: /, 'a long member name is clipped in the detail');
});

t.test('instanceIds: up to MAX_INSTANCE_ID_BYTES', async (t) => {
  t.ok(checkInstanceIdSize('urn:i:' + 'a'.repeat(MAX_INSTANCE_ID_BYTES - 6), 'instanceId'));
  refused(
    t,
    () => checkInstanceIdSize('urn:i:' + 'a'.repeat(MAX_INSTANCE_ID_BYTES - 5), 'instanceId'),
    /an instanceId may be at most 256 bytes/,
    '257 bytes',
  );
});

const TENANT = 't'.repeat(50);
const ID = ofBytes('urn:ngsi-ld:Max:', MAX_ID_BYTES);
const TYPE = ofBytes('https://example.org/T/', MAX_NAME_BYTES);
const ATTR = ofBytes('https://example.org/A/', MAX_NAME_BYTES);
const INSTANCE_ID = ofBytes('urn:ngsi-ld:attribute:instance:', MAX_INSTANCE_ID_BYTES);

t.test("every embdb key built of parts at their limits fits LMDB's 1978 bytes", async (t) => {
  const size = (key: unknown[]): number => writeKey(key, Buffer.alloc(8192), 0);
  const keys: Record<string, unknown[]> = {
    'entities [tenant, id]': [TENANT, ID],
    'typeMembers [tenant, type]': [TENANT, TYPE],
    'geoCells [tenant, attr, cell]': [TENANT, ATTR, -1],
    'histInstances [tenant, id, attr, ms, instanceId]': [TENANT, ID, ATTR, Number.MAX_SAFE_INTEGER, INSTANCE_ID],
    'histTypeIds [tenant, type, id]': [TENANT, TYPE, ID],
    'docs [tenant, collection, id]': [TENANT, 'subscriptionCounters', ID],
    'the default tenant (its empty part is one byte)': ['', ID, ATTR, Number.MAX_SAFE_INTEGER, INSTANCE_ID],
  };
  for (const [name, key] of Object.entries(keys)) t.ok(size(key) <= 1978, `${name}: ${size(key)} bytes`);
  t.ok(Buffer.byteLength(ID) <= 1978, 'an id fits as a value of the sorted-duplicates indexes');
  t.ok(size([ID, -179.123456789, -89.123456789, 179.123456789, 89.123456789]) <= 1978, 'and of the spatial index, with its box');
});

t.test('an entity with every id and name at its limit is written with its history and found by every path', async (t) => {
  const store = tempEmbdb(t, { troe: 'embdb' });
  const entity: StoredEntity = {
    id: ID,
    type: [TYPE],
    createdAt: '2026-01-01T00:00:00Z',
    modifiedAt: '2026-01-01T00:00:00Z',
    [ATTR]: [
      { type: 'GeoProperty', value: { type: 'Point', coordinates: [2.35, 48.85] } },
      { type: 'GeoProperty', datasetId: ofBytes('urn:ds:', MAX_ID_BYTES), value: { type: 'Point', coordinates: [2.36, 48.86] } },
    ],
  };
  await store.mutateEntity(TENANT, ID, () => ({ next: entity, result: undefined }), { createTenant: true });
  t.same(await store.getEntity(TENANT, ID), entity);
  for (const query of [{}, { type: ofTypes(TYPE) }, { ids: [ID] }, { geo: inBox(ATTR, [2.3, 48.8, 2.4, 48.9]) }])
    t.equal(
      (await store.queryEntities(TENANT, { ...query, limit: 10, offset: 0, count: true })).count,
      1,
      JSON.stringify(Object.keys(query)),
    );
  const history = store.history!;
  t.same((await history.queryTemporalEntities(TENANT, { type: ofTypes(TYPE), attrs: [ATTR], limit: 10, offset: 0, count: true })).count, 1);
  const page = await history.instances(TENANT, ID, { attrs: [ATTR], limit: 10 });
  t.equal(page.attrs[ATTR]?.length, 2, 'both instances in the history');
  t.equal(
    await history.updateInstance(
      TENANT,
      ID,
      ATTR,
      INSTANCE_ID,
      { type: 'GeoProperty', value: { type: 'Point', coordinates: [0, 0] } },
      '2026-01-02T00:00:00Z',
    ),
    'notFound',
    'an instanceId at its limit is looked up',
  );
});

t.test('a read naming an id or a name past every limit finds nothing, it does not throw', async (t) => {
  const store = tempEmbdb(t);
  const e: StoredEntity = {
    id: 'urn:a:1',
    type: ['https://example.org/A'],
    createdAt: '2026-01-01T00:00:00Z',
    modifiedAt: '2026-01-01T00:00:00Z',
  };
  await store.mutateEntity('', e.id, () => ({ next: e, result: undefined }));
  // A Relationship's object followed by a join, a registration's or subscription's entity type: checked nowhere else.
  const huge = 'urn:x:' + 'a'.repeat(6000);
  t.equal(await store.getEntity('', huge), undefined);
  t.equal(await store.getEntityTypes('', huge), undefined);
  t.same((await store.queryEntities('', { ids: [huge, e.id], limit: 10, offset: 0, count: true })).count, 1);
  t.same(await store.queryEntities('', { type: ofTypes(huge), limit: 10, offset: 0, count: true }), { entities: [], count: 0 });
  t.same((await store.queryEntities('', { type: ofTypes(huge, 'https://example.org/A'), limit: 10, offset: 0, count: true })).count, 1);
  t.same((await store.queryEntities('', { type: ofTypes(huge), idPattern: '.*', limit: 10, offset: 0, count: true })).count, 0);
  t.same((await store.queryEntities('', { geo: inBox(huge, [0, 0, 1, 1]), limit: 10, offset: 0, count: true })).count, 0);
});
