import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { parseQ } from '../../src/ngsild/query/q-parser.js';
import { attributesOf, comparableNumbers, compileQ, numberRangeOf } from '../../src/ngsild/query/q-eval.js';
import { resolveQ } from '../../src/ngsild/query/q-resolve.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { kindOf } from './helpers/errors.js';
import { repoPath } from '../helpers/repo.js';

const entities = JSON.parse(readFileSync(repoPath('test/fixtures/query/entities.json'), 'utf8')) as StoredEntity[];

const CORE = new Set(['observedAt', 'unitCode', 'datasetId', 'createdAt', 'modifiedAt', 'location']);
// The request @context of these tests: core terms to the NGSI-LD namespace, IRIs as they are, the rest to ex:.
const expand = (term: string): string =>
  CORE.has(term) ? `https://uri.etsi.org/ngsi-ld/${term}` : term.includes(':') ? term : `https://example.org/ns/${term}`;

const idsOf = (q: string): string[] => {
  const match = compileQ(parseQ(q), expand);
  return entities.filter(match).map((e) => e.id.slice('urn:ngsi-ld:'.length));
};

function check(t: Test, cases: [string, string[]][]): void {
  for (const [q, ids] of cases) t.same(idsOf(q), ids, q);
}

t.test('existence and non-existence of attributes, sub-attributes, members and compound members', async (t) => {
  check(t, [
    ['speed', ['Car:A', 'Car:B']],
    ['!speed', ['Sensor:C']],
    ['status', ['Sensor:C']],
    ['nothing', []],
    ['!nothing', ['Car:A', 'Car:B', 'Sensor:C']],
    ['speed.observedAt', ['Car:A']],
    ['!speed.observedAt', ['Car:B', 'Sensor:C']],
    ['isParked.providedBy', ['Car:A']],
    ['address[geo.zip]', ['Car:A']],
    ['address[street]', ['Car:A']],
    ['address[country]', []],
    ['!address[street]', ['Car:B', 'Sensor:C']],
    ['temperature.unitCode', ['Sensor:C']],
    ['temperature.datasetId', ['Car:A']],
  ]);
});

t.test('numbers compare numerically, across every instance of a multi-instance attribute', async (t) => {
  check(t, [
    ['speed==80', ['Car:A']],
    ['speed!=80', ['Car:B']],
    ['speed>80', ['Car:B']],
    ['speed>=80', ['Car:A', 'Car:B']],
    ['speed<120', ['Car:A']],
    ['speed<=120', ['Car:A', 'Car:B']],
    ['temperature==30', ['Car:A']],
    ['temperature==20', ['Car:A']],
    ['temperature>25', ['Car:A', 'Sensor:C']],
    ['temperature==25.5', ['Sensor:C']],
    ['temperature!=20', ['Car:A', 'Car:B', 'Sensor:C']],
    ['speed==80.0', ['Car:A']],
    ['speed=="80"', []],
    ['speed>"1"', []],
  ]);
});

t.test('value lists match any listed value; ranges include both bounds; != negates both', async (t) => {
  check(t, [
    ['speed==80,120', ['Car:A', 'Car:B']],
    ['speed==1,2,3', []],
    ['speed!=80,90', ['Car:B']],
    ['speed==80..120', ['Car:A', 'Car:B']],
    ['speed==81..120', ['Car:B']],
    ['speed!=81..200', ['Car:A']],
    ['temperature==16..24', ['Car:A']],
    ['brandName=="Audi".."Nissan"', ['Car:A']],
    ['brandName=="Mercedes","Volvo"', ['Car:A', 'Car:B']],
  ]);
});

t.test('strings compare exactly and by code unit order; array values include the query value', async (t) => {
  check(t, [
    ['brandName=="Mercedes"', ['Car:A']],
    ['brandName!="Mercedes"', ['Car:B']],
    ['brandName=="mercedes"', []],
    ['brandName>"N"', ['Car:B']],
    ['brandName<"N"', ['Car:A']],
    ['colors=="red"', ['Car:A']],
    ['colors!="red"', ['Car:B']],
    ['colors=="black","green"', ['Car:A', 'Car:B']],
    ['colors!="black","green"', []],
    ['status=="ok"', ['Sensor:C']],
    ['status==ok:x', []],
  ]);
});

t.test('booleans match only booleans', async (t) => {
  check(t, [
    ['active==true', ['Car:A']],
    ['active==false', ['Car:B']],
    ['active!=true', ['Car:B']],
    ['active=="true"', []],
  ]);
});

t.test('dateTime, date and time literals compare chronologically with stored strings', async (t) => {
  check(t, [
    ['speed.observedAt>=2024-05-01T10:00:00Z', ['Car:A']],
    ['speed.observedAt>2024-05-01T10:00:00Z', []],
    ['speed.observedAt==2024-05-01T12:00:00+02:00', ['Car:A']],
    ['speed.observedAt<2024-05-01T12:00:00+02:00', []],
    ['speed.observedAt>2024-05-01T11:59:00+02:00', ['Car:A']],
    ['speed.observedAt==2024-05-01T09:00:00Z..2024-05-01T11:00:00Z', ['Car:A']],
    ['speed.observedAt>2024-05-01', ['Car:A']],
    ['speed.modifiedAt>2024-05-01T10:00:00Z', ['Car:A']],
    ['since>2020-06-01', ['Car:B']],
    ['since<2021-01-01', ['Car:A']],
    ['since==2020-03-01', ['Car:A']],
    ['since>=2021-07-15T08:00:00Z', ['Car:B']],
    ['opens<12:00:00Z', ['Car:A']],
    ['opens>=12:00', ['Sensor:C']],
    ['opens==08:00:00Z..09:00:00Z', ['Car:A']],
    ['serviced>2023-01-01T00:00:00Z', ['Car:A']],
    ['brandName>2020-01-01T00:00:00Z', []],
    ['speed>2020-01-01', []],
  ]);
});

t.test('entity createdAt and modifiedAt are addressable as one-name paths', async (t) => {
  check(t, [
    ['createdAt>=2024-01-01T00:00:00Z', ['Car:A', 'Car:B']],
    ['modifiedAt<2024-01-01T00:00:00Z', ['Sensor:C']],
  ]);
});

t.test('a Relationship matches by its object with == and != only', async (t) => {
  check(t, [
    ['isParked=="urn:ngsi-ld:OffStreetParking:Downtown1"', ['Car:A']],
    ['isParked==urn:ngsi-ld:OffStreetParking:Downtown1', ['Car:A']],
    ['isParked!=urn:ngsi-ld:OffStreetParking:Downtown1', ['Car:B']],
    ['isParked==urn:ngsi-ld:OffStreetParking:Downtown1,urn:ngsi-ld:OffStreetParking:Uptown', ['Car:A', 'Car:B']],
    ['isParked>"urn:a"', []],
    ['isParked~=Downtown', []],
    ['isParked==5', []],
    ['isParked.providedBy==urn:ngsi-ld:Person:Bob', ['Car:A']],
    ['owners==urn:ngsi-ld:Person:Ann', ['Car:A']],
    ['owners!=urn:ngsi-ld:Person:Ann', []],
    ['owners==urn:ngsi-ld:Person:Zoe', []],
  ]);
});

t.test('a LanguageProperty matches any language, or the one in brackets, or all with [*]', async (t) => {
  check(t, [
    ['name=="red"', ['Car:A']],
    ['name=="rouge"', ['Car:A']],
    ['name[*]=="rot"', ['Car:A']],
    ['name[en]=="red"', ['Car:A']],
    ['name[fr]=="red"', []],
    ['name[en]!="red"', ['Car:B']],
    ['name!="red"', ['Car:B']],
    ['name[fr]=="chat"', ['Car:B']],
    ['name[en]=="chat"', []],
    ['name[it]', []],
    ['name[de]', ['Car:A']],
    ['name~=^bl', ['Car:B']],
  ]);
});

t.test('a VocabProperty compares with the query value expanded by the @context', async (t) => {
  check(t, [
    ['gender=="Male"', ['Car:A']],
    ['gender==ex:Female', []],
    ['gender==https://example.org/ns/Female', ['Car:B']],
    ['gender!="Male"', ['Car:B']],
    ['gender=="Male","Female"', ['Car:A', 'Car:B']],
  ]);
});

t.test('compound members: nested members, sub-attribute values, JSON and list values', async (t) => {
  check(t, [
    ['address[city]=="Berlin"', ['Car:A']],
    ['address[city]!="Berlin"', ['Car:B']],
    ['address[geo][zip]=="10115"', ['Car:A']],
    ['address[geo.zip]=="10115"', ['Car:A']],
    ['address[floors]==2', ['Car:A']],
    ['address[floors.0]==1', ['Car:A']],
    ['address[city.x]', []],
    ['sensor.rawdata[airquality.particulate]==40', ['Car:A']],
    ['sensor.rawdata[airquality.PM20]>80', ['Car:A']],
    ['sensor==40', ['Car:A']],
    ['tickets[value]=="Overstay 60 minutes"', ['Car:A']],
    ['readings==2', ['Car:A']],
    ['readings>2', ['Car:A']],
    ['readings>3', []],
    ['address[toString]', []],
    ['address[__proto__]', []],
  ]);
});

t.test('~= and !~= apply RE2 patterns to string values only', async (t) => {
  check(t, [
    ['brandName~=^Merc', ['Car:A']],
    ['brandName~=(?i)^mErC', ['Car:A']],
    ['brandName~=o', ['Car:B']],
    ['brandName!~=^Merc', ['Car:B']],
    ['label~=^[Ss]ensor-\\d+$', ['Car:A', 'Sensor:C']],
    ['label!~=^Sensor', ['Sensor:C']],
    ['speed~=8', []],
    ['speed!~=8', []],
    ['colors~=^gr', ['Car:A']],
    ['colors!~=^gr', ['Car:B']],
  ]);
});

t.test('AND, OR and parentheses combine terms with AND first', async (t) => {
  check(t, [
    ['speed>50;brandName!="Mercedes"', ['Car:B']],
    ['(speed>100|temperature>25);status', ['Sensor:C']],
    ['speed>100|temperature>25;status', ['Car:B', 'Sensor:C']],
    ['(temperature>=20;temperature<=25)|capacity<=10', ['Car:A']],
    ['!speed|speed==80', ['Car:A', 'Sensor:C']],
    ['speed;brandName;colors;name', ['Car:A', 'Car:B']],
    ['status|speed==80|speed==120', ['Car:A', 'Car:B', 'Sensor:C']],
  ]);
});

t.test('attribute names may be written as full IRIs, dots escaped as %2E', async (t) => {
  check(t, [
    ['https://example%2Eorg/ns/speed==80', ['Car:A']],
    ['https://example%2Eorg/ns/sensor.https://example%2Eorg/ns/rawdata', ['Car:A']],
  ]);
});

t.test('a member past observedAt addresses nothing', async (t) => {
  check(t, [['speed.observedAt.x', []]]);
});

t.test('attributesOf lists the attribute terms named, each once', async (t) => {
  t.same(attributesOf(parseQ('(speed>1|temperature<2);speed.observedAt;!status;name[en]~=x')), ['speed', 'temperature', 'status', 'name']);
  t.same(attributesOf(parseQ('a')), ['a']);
});

t.test('a catastrophic-backtracking pattern completes on a long non-matching value', async (t) => {
  const long = 'a'.repeat(50000) + 'b';
  const entity = {
    id: 'urn:x',
    type: ['T'],
    createdAt: '',
    modifiedAt: '',
    'https://example.org/ns/label': [{ type: 'Property', value: long }],
  } as StoredEntity;
  t.equal(compileQ(parseQ('label~=(a+)+$'), expand)(entity), false);
  t.equal(compileQ(parseQ('label~=(a+)+b$'), expand)(entity), true);
  t.equal(compileQ(parseQ('label~=^(a+)+$'), expand)(entity), false);
  t.equal(compileQ(parseQ('label~=^(a|aa)+$'), expand)(entity), false);
});

t.test('compileQ refuses a tree whose pattern is not RE2 or whose ordering value is not comparable', async (t) => {
  const path = { attr: ['a'], compound: [] };
  t.equal(
    kindOf(() => compileQ({ kind: 'match', path, negated: false, pattern: '(?=x)' }, expand)),
    'InvalidRequest 400',
  );
  t.equal(
    kindOf(() => compileQ({ kind: 'compare', path, op: '>', value: { kind: 'boolean', value: true } }, expand)),
    'InvalidRequest 400',
  );
});

t.test('malformed stored data does not throw, it does not match', async (t) => {
  const odd = [
    { id: 'urn:1', type: [], createdAt: '', modifiedAt: '', 'https://example.org/ns/speed': 'not an array' },
    { id: 'urn:2', type: [], createdAt: '', modifiedAt: '', 'https://example.org/ns/speed': [null, 5, { type: 'Property' }] },
    { id: 'urn:3', type: [], createdAt: '', modifiedAt: '', 'https://example.org/ns/name': [{ type: 'LanguageProperty' }] },
  ] as unknown as StoredEntity[];
  for (const q of ['speed', 'speed==1', 'speed.observedAt', 'name=="x"', 'speed[a]', 'speed~=x', '!speed']) {
    const f = compileQ(parseQ(q), expand);
    t.same(odd.map(f), q === '!speed' ? [true, true, true] : [false, false, false], q);
  }
});

t.test('expandValues: string values of the attributes listed compare as expanded terms, others as written', async (t) => {
  const doc = {
    id: 'urn:ngsi-ld:Doc:1',
    type: ['https://example.org/ns/Doc'],
    createdAt: '',
    modifiedAt: '',
    'https://example.org/ns/kind': [{ type: 'Property', value: 'https://example.org/ns/Sedan' }],
    'https://example.org/ns/label': [{ type: 'Property', value: 'Sedan' }],
    'https://example.org/ns/size': [{ type: 'Property', value: 4 }],
  } as unknown as StoredEntity;
  const listed = new Set(['https://example.org/ns/kind', 'https://example.org/ns/size']);
  const matches = (q: string, values?: ReadonlySet<string>): boolean => compileQ(parseQ(q), expand, values)(doc);
  t.notOk(matches('kind=="Sedan"'), 'without expandValues the term is compared as written');
  t.ok(matches('kind=="Sedan"', listed));
  t.ok(matches('kind=="Coupe","Sedan"', listed), 'every string of a list');
  t.ok(matches('kind=="https://example.org/ns/Sedan"', listed), 'an IRI stays itself');
  t.ok(matches('label=="Sedan"', listed), 'an attribute not listed compares as written');
  t.notOk(matches('label=="https://example.org/ns/Sedan"', listed));
  t.ok(matches('size==4', listed), 'numbers are never expanded');
  t.ok(matches('kind!="Coupe"', listed));
});

t.test('numberRangeOf: the interval of one attribute a q asks, only where a number comparison decides', async (t) => {
  const range = (q: string): unknown => numberRangeOf(resolveQ(parseQ(q), (term) => 'https://example.org/ns/' + term));
  const a = 'https://example.org/ns/a';
  t.same(range('a>=38'), { attrIri: a, min: 38, minOpen: false, max: Infinity, maxOpen: false });
  t.same(range('a<-0'), { attrIri: a, min: -Infinity, minOpen: false, max: 0, maxOpen: true }, '-0 is 0');
  t.same(range('a==1..5'), { attrIri: a, min: 1, minOpen: false, max: 5, maxOpen: false });
  t.same(range('a==7'), { attrIri: a, min: 7, minOpen: false, max: 7, maxOpen: false });
  t.same(range('b=="x";a>2'), { attrIri: a, min: 2, minOpen: true, max: Infinity, maxOpen: false }, 'the AND term that is one');
  for (const q of ['a!=3', 'a>3|b<2', 'a=="3"', 'a==1,2', 'a.observedAt>2024-01-01T00:00:00Z', 'a[x]>3', 'a.b>3', 'a', '!a', 'a~=x'])
    t.equal(range(q), undefined, `${q}: no interval`);
});

t.test('comparableNumbers: the numbers a comparison with a number reads, from every instance', async (t) => {
  const numbers = (instances: unknown): number[] => {
    const out: number[] = [];
    comparableNumbers(instances, out);
    return out;
  };
  t.same(
    numbers([
      { type: 'Property', value: 3 },
      { type: 'Property', value: [4, 'x', -0], datasetId: 'urn:d' },
    ]),
    [3, 4, 0],
  );
  t.same(numbers([{ type: 'Property', value: { '@value': 5 } }]), [5]);
  t.same(numbers([{ type: 'ListProperty', valueList: [1, 2] }]), [1, 2]);
  t.same(numbers([{ type: 'JsonProperty', json: 6 }]), [6]);
  t.same(
    numbers([
      { type: 'Relationship', object: 'urn:x' },
      { type: 'Property', value: '7' },
      { type: 'Property', value: { n: 8 } },
    ]),
    [],
  );
  t.same(numbers(undefined), []);
});
