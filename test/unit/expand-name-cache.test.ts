// expand.ts keeps the names it checked and expanded, per resolved @context: a name kept for one context never
// answers for another, a bad name is refused every time (never kept), and a type name kept never passes as an
// attribute name that an attribute's own checks refuse.
import t from 'tap';
import { expandEntity } from '../../src/ngsild/entity/expand.js';
import { mapContext, DEFAULT_VOCAB } from './helpers/map-context.js';
import { ldErrorOf } from './helpers/entity-fixtures.js';

const now = '2024-05-01T12:00:00Z';
const body = (attrs: Record<string, unknown>, type: unknown = 'Sensor'): Record<string, unknown> => ({
  id: 'urn:ngsi-ld:Sensor:1',
  type,
  ...attrs,
});

t.test('the same name expands by each context, whichever came first', async (t) => {
  const plain = mapContext({});
  const mapped = mapContext({ speed: 'https://example.org/speed', Sensor: 'https://example.org/Sensor' });
  const a = expandEntity(body({ speed: { type: 'Property', value: 1 } }), plain, { now });
  const b = expandEntity(body({ speed: { type: 'Property', value: 1 } }), mapped, { now });
  const c = expandEntity(body({ speed: { type: 'Property', value: 1 } }), plain, { now });
  t.ok(DEFAULT_VOCAB + 'speed' in a);
  t.ok('https://example.org/speed' in b);
  t.ok(DEFAULT_VOCAB + 'speed' in c);
  t.same(a.type, [DEFAULT_VOCAB + 'Sensor']);
  t.same(b.type, ['https://example.org/Sensor']);
  t.same(c.type, [DEFAULT_VOCAB + 'Sensor']);
});

t.test('a bad name is refused each time it comes, after good names were kept', async (t) => {
  const ctx = mapContext({});
  expandEntity(body({ speed: { type: 'Property', value: 1 } }), ctx, { now });
  for (let i = 0; i < 2; i++) {
    t.equal(ldErrorOf(() => expandEntity(body({ 'sp eed': { type: 'Property', value: 1 } }), ctx, { now })).kind, 'BadRequestData');
    t.equal(ldErrorOf(() => expandEntity(body({ speed: { type: 'Property', value: 1 } }, 'Sen sor'), ctx, { now })).kind, 'BadRequestData');
    t.equal(ldErrorOf(() => expandEntity(body({ '': { type: 'Property', value: 1 } }), ctx, { now })).kind, 'BadRequestData');
  }
});

t.test('a type name kept is no attribute name: @-names stay refused as attributes', async (t) => {
  const ctx = mapContext({});
  // A type may be any term; the same text as an attribute name is a JSON-LD keyword and is refused.
  try {
    expandEntity(body({}, '@Sensor'), ctx, { now });
  } catch {
    // refused as a type too: what matters is the attribute below
  }
  t.equal(ldErrorOf(() => expandEntity(body({ '@Sensor': { type: 'Property', value: 1 } }), ctx, { now })).kind, 'BadRequestData');
});

t.test('more names than a context keeps: every one still expands right', async (t) => {
  const ctx = mapContext({});
  for (let i = 0; i < 3000; i++) {
    const e = expandEntity(body({ [`a${i}`]: { type: 'Property', value: i } }, `T${i % 1500}`), ctx, { now });
    if (!(DEFAULT_VOCAB + `a${i}` in e) || e.type[0] !== DEFAULT_VOCAB + `T${i % 1500}`) {
      t.fail(`name ${i}`);
      return;
    }
  }
  t.pass('3000 attribute names and 1500 type names expanded by the default vocabulary');
});
