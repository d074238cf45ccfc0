// The tuning workload file (seed 001 §2.8): every member's default, a bad member refused with its JSON path, and the
// bodies the tuner makes from it; the command refuses a bad workload or knob with exit 2 and the member's name.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { entitiesPerType, loadWorkload, parseWorkload, WorkloadError } from '../../tune/workload.js';
import { parseQ, type QNode } from '../../src/ngsild/query/q-parser.js';
import { entityBody, entityId, mixSlots, patchedAttributes, subscriptionBodies } from '../../tune/entities.js';
import { ROOT } from '../helpers/repo.js';

const TUNE = join(ROOT, 'dist/tune/tune.js');
const T1 = 'https://example.org/Meter';
const T2 = 'https://example.org/Room';

t.test('an empty workload is every default of §2.8', async (t) => {
  const w = parseWorkload({});
  t.same(w.store, { database: 'embdb', persistent: false, history: 'none' });
  t.equal(w.auth, 'none');
  t.equal(w.entities.count, 1000);
  t.equal(w.entities.types.length, 1);
  t.same(w.entities.types[0]!.attributes[0], {
    name: 'https://uri.etsi.org/ngsi-ld/default-context/value',
    type: 'Property',
    observedAt: false,
    subAttributes: 0,
  });
  t.same(w.subscriptions, []);
  t.equal(w.load.concurrency, 50);
  t.same(w.load.mix, { patch: 1, query: 1, retrieve: 1, create: 0 });
  t.same(w.load.query, { type: w.entities.types[0]!.type, limit: 20 });
  t.equal(w.durationS, 30);
});

t.test('shares: equal when none is given, normalised when all are, counts add up to entities.count', async (t) => {
  const equal = parseWorkload({ entities: { count: 10, types: [{ type: T1 }, { type: T2 }, { type: 'https://example.org/X' }] } });
  t.same(
    equal.entities.types.map((x) => x.share),
    [1 / 3, 1 / 3, 1 / 3],
  );
  t.same(entitiesPerType(equal), [4, 3, 3]);
  const given = parseWorkload({
    entities: {
      count: 7,
      types: [
        { type: T1, share: 3 },
        { type: T2, share: 1 },
      ],
    },
  });
  t.same(
    given.entities.types.map((x) => x.share),
    [0.75, 0.25],
  );
  t.same(entitiesPerType(given), [5, 2]);
});

t.test('durations: seconds, milliseconds, minutes', async (t) => {
  t.equal(parseWorkload({ duration: '500ms' }).durationS, 0.5);
  t.equal(parseWorkload({ duration: '2m' }).durationS, 120);
  t.equal(parseWorkload({ duration: '1.5s' }).durationS, 1.5);
});

t.test('a bad member is a WorkloadError naming its JSON path', async (t) => {
  const types = [{ type: T1, attributes: [{ name: 'https://example.org/a' }] }];
  const bad: [unknown, string][] = [
    [[], '(the file)'],
    [{ stor: {} }, 'stor'],
    [{ store: { database: 'mongo' } }, 'store.database'],
    [{ store: { persistent: 'yes' } }, 'store.persistent'],
    [{ store: { history: 'influx' } }, 'store.history'],
    [{ store: { database: 'docdb', history: 'embdb' } }, 'store.history'],
    [{ auth: 'oauth' }, 'auth'],
    [{ entities: { count: -1 } }, 'entities.count'],
    [{ entities: { count: 1.5 } }, 'entities.count'],
    [{ entities: { types: [] } }, 'entities.types'],
    [{ entities: { types: [{ share: 1 }] } }, 'entities.types[0].type'],
    [{ entities: { types: [{ type: T1, share: 1 }, { type: T2 }] } }, 'entities.types[1].share'],
    [{ entities: { types: [{ type: T1, share: -1 }] } }, 'entities.types[0].share'],
    [{ entities: { types: [{ type: T1, share: 0 }] } }, 'entities.types[0].share'],
    [{ entities: { types: [{ type: T1 }, { type: T1 }] } }, 'entities.types[1].type'],
    [{ entities: { types: [{ type: T1, attributes: [{ name: 'a', type: 'Text' }] }] } }, 'entities.types[0].attributes[0].type'],
    [{ entities: { types: [{ type: T1, attributes: [{ type: 'Property' }] }] } }, 'entities.types[0].attributes[0].name'],
    [{ entities: { types: [{ type: T1, attributes: [{ name: 'a', observedAt: 1 }] }] } }, 'entities.types[0].attributes[0].observedAt'],
    [
      { entities: { types: [{ type: T1, attributes: [{ name: 'a', subAttributes: -2 }] }] } },
      'entities.types[0].attributes[0].subAttributes',
    ],
    [{ entities: { types: [{ type: T1, attributes: [{ name: 'a', value: null }] }] } }, 'entities.types[0].attributes[0].value'],
    [
      { entities: { types: [{ type: T1, attributes: [{ name: 'a', type: 'GeoProperty', value: { type: 'Polygon' } }] }] } },
      'entities.types[0].attributes[0].value',
    ],
    [{ entities: { types: [{ type: T1, attributes: [{ name: 'a' }, { name: 'a' }] }] } }, 'entities.types[0].attributes[1].name'],
    [{ entities: { types: [{ type: T1, attributes: [{ name: 'a', unit: 'C' }] }] } }, 'entities.types[0].attributes[0].unit'],
    [{ entities: { types }, subscriptions: {} }, 'subscriptions'],
    [{ entities: { types }, subscriptions: [{ count: 0 }] }, 'subscriptions[0].count'],
    [{ entities: { types }, subscriptions: [{ select: 'all' }] }, 'subscriptions[0].select'],
    [{ entities: { types }, subscriptions: [{ type: T2 }] }, 'subscriptions[0].type'],
    [{ entities: { count: 5, types }, subscriptions: [{ select: 'perEntity', count: 6 }] }, 'subscriptions[0].count'],
    [{ entities: { types }, subscriptions: [{ watchedAttributes: 'a' }] }, 'subscriptions[0].watchedAttributes'],
    [{ entities: { types }, subscriptions: [{ q: '' }] }, 'subscriptions[0].q'],
    [{ load: { concurrency: 0 } }, 'load.concurrency'],
    [{ load: { mix: { patch: 0 } } }, 'load.mix'],
    [{ load: { mix: { delete: 1 } } }, 'load.mix.delete'],
    [{ load: { mix: { query: '1' } } }, 'load.mix.query'],
    [{ entities: { types }, load: { patch: { attributes: ['https://example.org/b'] } } }, 'load.patch.attributes[0]'],
    [{ load: { patch: { attributes: 'x' } } }, 'load.patch.attributes'],
    [{ load: { query: { limit: 1001 } } }, 'load.query.limit'],
    [{ load: { query: { q: 7 } } }, 'load.query.q'],
    [{ duration: 30 }, 'duration'],
    [{ duration: '30 minutes' }, 'duration'],
    [{ duration: '0s' }, 'duration'],
  ];
  for (const [input, path] of bad) {
    let e: unknown;
    try {
      parseWorkload(input);
    } catch (x) {
      e = x;
    }
    t.ok(e instanceof WorkloadError, `${JSON.stringify(input)} is refused`);
    t.equal((e as WorkloadError).path, path, `the error names ${path}: ${(e as Error).message}`);
  }
});

t.test('every workload of workloads/ is valid, and smart-city keeps its §2.8 shape', async (t) => {
  const files = readdirSync(join(ROOT, 'workloads')).filter((f) => f.endsWith('.json'));
  t.ok(files.length >= 4, 'smart-city, iot-feed, dashboard, data-space');
  for (const f of files) t.doesNotThrow(() => loadWorkload(join(ROOT, 'workloads', f)), f);
  const sc = loadWorkload(join(ROOT, 'workloads/smart-city.json'));
  t.equal(sc.entities.count, 10000);
  t.same(entitiesPerType(sc), [7000, 3000]);
  t.equal(sc.subscriptions[0]!.count, 100);
  t.equal(loadWorkload(join(ROOT, 'workloads/data-space.json')).auth, 'dsec');
});

/** The first attribute names of every path of a q. */
function qAttributes(n: QNode): string[] {
  if (n.kind === 'and' || n.kind === 'or') return n.terms.flatMap(qAttributes);
  return [n.path.attr[0]!];
}

t.test('every q of workloads/ names attributes of its types (a `.` in an IRI is written %2E, else it splits the name)', async (t) => {
  for (const f of readdirSync(join(ROOT, 'workloads')).filter((x) => x.endsWith('.json'))) {
    const w = loadWorkload(join(ROOT, 'workloads', f));
    const names = new Set(w.entities.types.flatMap((x) => x.attributes.map((a) => a.name)));
    const qs = [w.load.query.q, ...w.subscriptions.map((x) => x.q)].filter((q): q is string => q !== undefined);
    for (const q of qs) for (const a of qAttributes(parseQ(q))) t.ok(names.has(a), `${f}: ${q} names ${a}`);
  }
});

t.test('entity bodies: a number varies per entity, anything else is copied; observedAt and sub-attributes', async (t) => {
  const w = parseWorkload({
    entities: {
      count: 4,
      types: [
        {
          type: T1,
          attributes: [
            { name: 'https://example.org/n', value: 20, observedAt: true, subAttributes: 2 },
            { name: 'https://example.org/s', value: 'free' },
            { name: 'https://example.org/loc', type: 'GeoProperty' },
            { name: 'https://example.org/rel', type: 'Relationship' },
            { name: 'https://example.org/l', type: 'LanguageProperty' },
            { name: 'https://example.org/v', type: 'VocabProperty' },
            { name: 'https://example.org/li', type: 'ListProperty' },
            { name: 'https://example.org/j', type: 'JsonProperty', value: { a: 1 } },
          ],
        },
      ],
    },
  });
  const e1 = entityBody(w, 0, 1, 4);
  const e2 = entityBody(w, 0, 2, 4);
  t.equal(e1.id, entityId(T1, 0, 1));
  t.match(e1.id, /^urn:ngsi-ld:Meter:0-1$/, 'the id names the type as its third part');
  const n1 = e1['https://example.org/n'] as Record<string, unknown>;
  t.equal(n1.value, 21);
  t.equal((e2['https://example.org/n'] as Record<string, unknown>).value, 22);
  t.type(n1.observedAt, 'string');
  t.same(n1['https://uri.etsi.org/ngsi-ld/default-context/sub1'], { type: 'Property', value: 1 });
  t.same(e1['https://example.org/s'], { type: 'Property', value: 'free' });
  t.equal((e1['https://example.org/loc'] as { value: { type: string } }).value.type, 'Point');
  t.not(JSON.stringify(e1['https://example.org/loc']), JSON.stringify(e2['https://example.org/loc']), 'points differ per entity');
  t.same(e1['https://example.org/rel'], { type: 'Relationship', object: entityId(T1, 0, 2) });
  t.ok((e1['https://example.org/l'] as Record<string, unknown>).languageMap);
  t.ok((e1['https://example.org/v'] as Record<string, unknown>).vocab);
  t.ok(Array.isArray((e1['https://example.org/li'] as Record<string, unknown>).valueList));
  t.same(e1['https://example.org/j'], { type: 'JsonProperty', json: { a: 1 } });
});

t.test('patches write the listed attributes a type has, else its first Property', async (t) => {
  const w = parseWorkload({
    entities: {
      types: [
        {
          type: T1,
          attributes: [
            { name: 'https://example.org/loc', type: 'GeoProperty' },
            { name: 'https://example.org/a' },
            { name: 'https://example.org/b' },
          ],
        },
        { type: T2, attributes: [{ name: 'https://example.org/c' }] },
      ],
    },
    load: { patch: { attributes: ['https://example.org/b'] } },
  });
  t.same(
    patchedAttributes(w, w.entities.types[0]!).map((a) => a.name),
    ['https://example.org/b'],
  );
  t.same(
    patchedAttributes(w, w.entities.types[1]!).map((a) => a.name),
    ['https://example.org/c'],
  );
});

t.test('subscriptions: perEntity names one entity each, byType the type', async (t) => {
  const w = parseWorkload({
    entities: { count: 3, types: [{ type: T1 }] },
    subscriptions: [
      { count: 2, select: 'perEntity', watchedAttributes: ['https://example.org/a'], q: 'x>1' },
      { count: 1, select: 'byType' },
    ],
  });
  const s = subscriptionBodies(w, 'http://127.0.0.1:9/notify');
  t.equal(s.length, 3);
  t.same(s[0]!.entities, [{ id: entityId(T1, 0, 0), type: T1 }]);
  t.same(s[1]!.entities, [{ id: entityId(T1, 0, 1), type: T1 }]);
  t.same(s[0]!.watchedAttributes, ['https://example.org/a']);
  t.equal(s[0]!.q, 'x>1');
  t.same(s[2]!.entities, [{ type: T1 }]);
});

t.test('the mix: slots in proportion, every kind with a share at least once, interleaved', async (t) => {
  const slots = mixSlots({ patch: 0.6, retrieve: 0.3, query: 0.1, create: 0 });
  t.equal(slots.length, 20);
  t.equal(slots.filter((k) => k === 'patch').length, 12);
  t.equal(slots.filter((k) => k === 'retrieve').length, 6);
  t.equal(slots.filter((k) => k === 'query').length, 2);
  t.notOk(slots.includes('create'));
  t.same(slots.slice(0, 3), ['patch', 'query', 'retrieve'], 'interleaved, not in blocks');
  t.equal(mixSlots({ patch: 1000, retrieve: 0, query: 0, create: 1 }).filter((k) => k === 'create').length, 1);
});

t.test('the command: a bad workload or knob exits 2 with one line naming it, and runs nothing', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tune-workload-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'w.json');
  writeFileSync(file, JSON.stringify({ entities: { types: [{ type: T1, attributes: [{ name: 'a', type: 'Text' }] }] } }));
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [TUNE, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, cwd: dir, timeout: 30_000 });
  const r = run([file]);
  t.equal(r.status, 2);
  t.match(r.stderr, /entities\.types\[0\]\.attributes\[0\]\.type: must be one of Property/);
  t.equal(r.stdout, '');
  writeFileSync(join(dir, 'bad.json'), '{ "load": ');
  t.match(run([join(dir, 'bad.json')]).stderr, /is not JSON/);
  t.match(run([join(dir, 'missing.json')]).stderr, /cannot be read/);
  writeFileSync(file, '{}');
  const knob = run([file], { TUNE_REPEATS: 'three' });
  t.equal(knob.status, 2);
  t.match(knob.stderr, /TUNE_REPEATS: must be an integer/);
  t.match(run([file], { TUNE_LOAD_CPUS: '0;rm' }).stderr, /TUNE_LOAD_CPUS: must be a CPU list/);
  t.match(run([file], { TUNE_TRAIN_DURATION: 'long' }).stderr, /TUNE_TRAIN_DURATION: must be a duration/);
  t.match(run([file], { TUNE_TRAIN_KNOBS: 'connectionPoolSize,heap' }).stderr, /TUNE_TRAIN_KNOBS: "heap" is not one of/);
  t.equal(run([]).status, 2, 'no workload');
  t.same(readdirSync(dir).sort(), ['bad.json', 'w.json'], 'no tune-result.json written');
});
