// The pure parts of distributed operations: the operations a registration offers (CIM 009 v1.8.1 table 4.20-1),
// which registrations a retrieve or a write reaches, how an entity split across sources is merged (§4.3.6), Via
// pseudonyms, and the query string a source is sent.
import t from 'tap';
import { offeredOperations, offers } from '../../src/ngsild/registration/operations.js';
import { mergeEntityInto, restrictEntity } from '../../src/ngsild/registration/merge-entity.js';
import { retrieveTargets, writeTargets, isLive } from '../../src/ngsild/registration/match.js';
import type { RegistrationBody } from '../../src/ngsild/subscription/registration.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { viaNames } from '../../src/ops/forward/via.js';
import { queryWithout } from '../../src/ops/forward/sources.js';
import { uptimeDuration } from '../../src/ops/source-identity.js';

const V = 'https://ex.org/Vehicle';
const SPEED = 'https://ex.org/speed';
const BRAND = 'https://ex.org/brand';

const reg = (extra: Partial<RegistrationBody>): RegistrationBody => ({
  id: 'urn:r:1',
  type: 'ContextSourceRegistration',
  endpoint: 'http://127.0.0.1:1',
  information: [{ entities: [{ type: V }] }],
  ...extra,
});
const entity = (attrs: Record<string, unknown>, types = [V]): StoredEntity => ({
  id: 'urn:e:1',
  type: types,
  createdAt: 'c',
  modifiedAt: 'm',
  ...attrs,
});

t.test('operations: groups unfold, absence offers everything, a name offers itself only', async (t) => {
  t.ok(offers(undefined, 'createEntity'));
  t.ok(offers([], 'queryBatch'));
  t.ok(offers(['retrieveOps'], 'retrieveEntity'));
  t.notOk(offers(['retrieveOps'], 'queryBatch'));
  t.ok(offers(['federationOps'], 'queryBatch'));
  t.notOk(offers(['federationOps'], 'createEntity'));
  t.ok(offers(['redirectionOps'], 'deleteEntity'));
  t.notOk(offers(['redirectionOps'], 'createSubscription'));
  t.ok(offers(['updateOps'], 'replaceAttrs'));
  t.ok(offers(['queryEntity'], 'queryEntity'));
  t.notOk(offers(['queryEntity'], 'retrieveEntity'));
  t.notOk(offers(['noSuchThing'], 'retrieveEntity'));
  const list = ['retrieveOps'];
  t.equal(offeredOperations(list), offeredOperations(list), 'unfolded once per list');
});

t.test('retrieve and write targets: by id, idPattern, type when known, attributes, operation; auxiliary takes no write', async (t) => {
  const byId = reg({ id: 'urn:r:id', information: [{ entities: [{ type: V, id: 'urn:e:1' }] }] });
  const byPattern = reg({ id: 'urn:r:pat', information: [{ entities: [{ type: V, idPattern: '^urn:e:[0-9]$' }] }] });
  const otherId = reg({ id: 'urn:r:other', information: [{ entities: [{ type: V, id: 'urn:e:2' }] }] });
  const speedOnly = reg({ id: 'urn:r:speed', information: [{ entities: [{ type: V }], propertyNames: [SPEED] }] });
  const aux = reg({ id: 'urn:r:aux', mode: 'auxiliary' });
  const noRetrieve = reg({ id: 'urn:r:noret', operations: ['queryBatch'] });
  const all = [byId, byPattern, otherId, speedOnly, aux, noRetrieve];
  const ids = (ts: Array<{ body: RegistrationBody }>): string[] => ts.map((x) => x.body.id);
  t.same(ids(retrieveTargets(all, 'retrieveEntity', 'urn:e:1', undefined, undefined)), [
    'urn:r:id',
    'urn:r:pat',
    'urn:r:speed',
    'urn:r:aux',
  ]);
  t.same(
    ids(retrieveTargets(all, 'retrieveEntity', 'urn:e:1', ['https://ex.org/Other'], undefined)),
    [],
    'known types that none registers',
  );
  t.same(
    ids(retrieveTargets(all, 'retrieveEntity', 'urn:e:1', undefined, new Set([BRAND]))),
    ['urn:r:id', 'urn:r:pat', 'urn:r:aux'],
    'attrs',
  );
  t.equal(retrieveTargets([speedOnly], 'retrieveEntity', 'urn:e:9', undefined, undefined)[0]?.attrs?.has(SPEED), true);
  t.same(
    ids(writeTargets(all, 'createEntity', 'urn:e:1', [V], [SPEED])),
    ['urn:r:id', 'urn:r:pat', 'urn:r:speed'],
    'no auxiliary, no write not offered',
  );
  t.ok(isLive(reg({}), Date.now()));
  t.notOk(isLive(reg({ expiresAt: '2000-01-01T00:00:00Z' }), Date.now()));
});

t.test('merge: types and attributes joined, one instance per datasetId, the later observedAt, modes weigh', async (t) => {
  const into = entity({ [SPEED]: [{ type: 'Property', value: 1, observedAt: '2024-01-01T00:00:00Z' }] });
  mergeEntityInto(
    into,
    entity(
      {
        [SPEED]: [
          { type: 'Property', value: 2, observedAt: '2024-02-01T00:00:00Z' },
          { type: 'Property', value: 3, datasetId: 'urn:ds:1' },
        ],
        [BRAND]: [{ type: 'Property', value: 'b' }],
      },
      [V, 'https://ex.org/Car'],
    ),
    { weight: 'inclusive' },
  );
  t.same(into.type, [V, 'https://ex.org/Car']);
  t.same(
    (into[SPEED] as Array<{ value: number }>).map((i) => i.value),
    [2, 3],
  );
  t.same(into[BRAND], [{ type: 'Property', value: 'b' }]);
  const older = entity({ [SPEED]: [{ type: 'Property', value: 9, observedAt: '2023-01-01T00:00:00Z' }] });
  mergeEntityInto(into, older, { weight: 'inclusive' });
  t.equal((into[SPEED] as Array<{ value: number }>)[0]!.value, 2, 'an older observation does not replace');
  const noTime = entity({ [BRAND]: [{ type: 'Property', value: 'other' }] });
  mergeEntityInto(into, noTime, { weight: 'inclusive' });
  t.same(into[BRAND], [{ type: 'Property', value: 'b' }], 'without observedAt the first merged stays');
  mergeEntityInto(into, noTime, { weight: 'auxiliary' });
  t.same(into[BRAND], [{ type: 'Property', value: 'b' }], 'auxiliary fills in only');
  mergeEntityInto(into, noTime, { weight: 'exclusive', only: new Set([SPEED]) });
  t.same(into[BRAND], [{ type: 'Property', value: 'b' }], 'only what the registration names');
  mergeEntityInto(into, noTime, { weight: 'exclusive' });
  t.same(into[BRAND], [{ type: 'Property', value: 'other' }], 'exclusive replaces');
  const r = restrictEntity(into, new Set([SPEED]));
  t.same(Object.keys(r).sort(), [SPEED, 'createdAt', 'id', 'modifiedAt', 'type'].sort());
});

t.test('Via pseudonyms, the query string a source is sent, the uptime duration', async (t) => {
  t.same(viaNames('1.1 a, HTTP/1.1 b (comment),1.0 c'), ['a', 'b', 'c']);
  t.same(viaNames(''), []);
  t.same(viaNames('garbage'), []);
  t.equal(queryWithout('attrs=speed&type=Vehicle&local=true&options=keyValues', new Set(['local', 'options'])), 'attrs=speed&type=Vehicle');
  t.equal(queryWithout('id=urn%3Angsi-ld%3AV%3A1&q=a%3D%3D%22x%20y%22', new Set()), 'id=urn:ngsi-ld:V:1&q=a%3D%3D%22x%20y%22');
  t.equal(queryWithout('a=%E0%A4%A&&b', new Set()), 'a=%25E0%25A4%25A&b', 'a malformed escape is sent as the text it is');
  t.equal(queryWithout('', new Set()), '');
  t.equal(uptimeDuration(0), 'PT0S');
  t.equal(uptimeDuration(3_723_000), 'PT1H2M3S');
});
