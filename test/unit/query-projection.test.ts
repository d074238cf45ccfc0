// The projection language of pick and omit (CIM 009 v1.8.1 §4.21): names, nested braces for linked entities,
// and every malformed text refused with 400 BadRequestData, within the length, name and depth bounds.
import t from 'tap';
import {
  parseProjection,
  parseProjectionList,
  checkDisjoint,
  PROJECTION_MAX_DEPTH,
  PROJECTION_MAX_LENGTH,
  PROJECTION_MAX_NAMES,
  type Projection,
} from '../../src/ngsild/query/projection.js';
import { kindOf } from './helpers/errors.js';

/** A projection as plain data: names, plain names and the nested ones. */
function shape(p: Projection): unknown {
  const linked: Record<string, unknown> = {};
  for (const [name, inner] of p.linked) linked[name] = shape(inner);
  return { names: [...p.names], plain: [...p.plain], linked };
}

t.test('a list of names; braces project the linked entities of a Relationship, to any depth up to the bound', async (t) => {
  t.same(shape(parseProjection('id,name', 'pick')), { names: ['id', 'name'], plain: ['id', 'name'], linked: {} });
  t.same(shape(parseProjection('id,locatedAt{id,name}', 'pick')), {
    names: ['id', 'locatedAt'],
    plain: ['id'],
    linked: { locatedAt: { names: ['id', 'name'], plain: ['id', 'name'], linked: {} } },
  });
  t.same(shape(parseProjection('locatedAt{name,isInCountry{description}}', 'omit')), {
    names: ['locatedAt'],
    plain: [],
    linked: {
      locatedAt: {
        names: ['name', 'isInCountry'],
        plain: ['name'],
        linked: { isInCountry: { names: ['description'], plain: ['description'], linked: {} } },
      },
    },
  });
  t.same(
    shape(parseProjection('https://example.org/a.b,ex:c', 'pick')).valueOf(),
    {
      names: ['https://example.org/a.b', 'ex:c'],
      plain: ['https://example.org/a.b', 'ex:c'],
      linked: {},
    },
    'IRIs and compact IRIs are names',
  );
  t.same([...parseProjection(' id , name ', 'pick').names], ['id', 'name'], 'spaces around names are ignored');
});

t.test('a name given twice counts once; two braced lists of one name are merged', async (t) => {
  const p = parseProjection('a,a,r{x},r{y{z}},r{y{w}}', 'pick');
  t.same([...p.names], ['a', 'r']);
  t.same([...p.linked.get('r')!.names], ['x', 'y']);
  t.same([...p.linked.get('r')!.linked.get('y')!.names], ['z', 'w']);
});

t.test('malformed projections are 400 BadRequestData naming the parameter and the position', async (t) => {
  const cases: [string, RegExp][] = [
    ['', /pick: expected an entity member name at position 0/],
    ['id;name', /expected ',' or the end at position 2/],
    ['id,locatedAt{name', /expected ',' or '}' at position 17/],
    ['id,locatedAt{{name}', /expected an entity member name, not '\{' at position 13/],
    ['id,,name', /expected an entity member name, not ',' at position 3/],
    ['id,locatedAt{,name}', /not ',' at position 13/],
    ['id,locatedAt{}', /not '\}' at position 13/],
    ['id}', /unbalanced '\}' at position 2/],
    ['id,', /expected an entity member name at position 3/],
    ['{id}', /not '\{' at position 0/],
    ['na"me', /expected ',' or the end at position 2/],
    ['a b', /expected ',' or the end at position 2/],
    ['a(b)', /expected ',' or the end at position 1/],
  ];
  for (const [text, detail] of cases) {
    t.equal(
      kindOf(() => parseProjection(text, 'pick')),
      'BadRequestData 400',
      text,
    );
    t.throws(() => parseProjection(text, 'pick'), { detail }, text);
  }
});

t.test('bounds: nesting depth, number of names and length are refused past their limit, not crashed on', async (t) => {
  const nest = (n: number): string => 'a{'.repeat(n) + 'x' + '}'.repeat(n);
  t.equal(
    kindOf(() => parseProjection(nest(PROJECTION_MAX_DEPTH), 'pick')),
    'no error',
  );
  t.throws(() => parseProjection(nest(PROJECTION_MAX_DEPTH + 1), 'pick'), { detail: /nested deeper than 5/ });
  t.throws(
    () => parseProjection(nest(100_000).slice(0, PROJECTION_MAX_LENGTH), 'pick'),
    { detail: /nested deeper/ },
    'deep text stops at the bound',
  );
  const names = (n: number): string => Array.from({ length: n }, (_, i) => `n${i}`).join(',');
  t.equal(
    kindOf(() => parseProjection(names(PROJECTION_MAX_NAMES), 'pick')),
    'no error',
  );
  t.throws(() => parseProjection(names(PROJECTION_MAX_NAMES + 1), 'pick'), { detail: /more than 256 names/ });
  t.throws(() => parseProjection('a'.repeat(PROJECTION_MAX_LENGTH + 1), 'omit'), { detail: /omit: longer than 4096/ });
});

t.test('a JSON list of names (Query body, subscription) parses as the same language', async (t) => {
  t.same([...parseProjectionList(['id', 'locatedAt{name}'], 'notification.pick').linked.keys()], ['locatedAt']);
  t.same([...parseProjectionList('id,name', 'pick').names], ['id', 'name'], 'a comma-separated string too');
  for (const bad of [[], [''], [1], {}, null, ['a;b'], ['a{']])
    t.equal(
      kindOf(() => parseProjectionList(bad, 'pick')),
      'BadRequestData 400',
      JSON.stringify(bad),
    );
});

t.test('a member both picked and omitted is refused; braces in omit do not omit their name', async (t) => {
  const both = (pick: string, omit: string) => kindOf(() => checkDisjoint(parseProjection(pick, 'pick'), parseProjection(omit, 'omit')));
  t.equal(both('name', 'name'), 'BadRequestData 400');
  t.equal(both('id,name', 'type'), 'no error');
  t.equal(both('id,locatedAt', 'locatedAt{name}'), 'no error', 'omit locatedAt{name} keeps locatedAt');
  t.equal(both('locatedAt{name}', 'locatedAt{name}'), 'BadRequestData 400', 'the same member one level down');
  t.equal(both('locatedAt{name}', 'locatedAt{id}'), 'no error');
});
