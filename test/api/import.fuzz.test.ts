// ldbroker-import on hostile streams (fast-check, seeded): records of every kind with members of any JSON shape,
// broken lines, names of every form. Whatever a line holds, the import ends, each non-empty line is imported or
// refused exactly once (named by its number when refused), and the store opens afterwards for a broker.
import t from 'tap';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, call, NGSI } from './helpers/broker.js';
import { importInto } from './helpers/import.js';

const SEED = Number(process.env.FUZZ_SEED ?? 21);
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const T0 = '2023-11-14T22:13:20.123Z';

const name = fc.constantFrom('https://ex.org/a', 'https://ex.org/b', 'location', 'a', 'ex:a', '', '@id', '__proto__', 'urn:x:y z');
const json = fc.jsonValue({ maxDepth: 3 });
const instance = fc.record(
  {
    type: fc.constantFrom('Property', 'Relationship', 'GeoProperty', 'LanguageProperty', 'VocabProperty', 'Nope'),
    value: json,
    object: fc.oneof(fc.constant('urn:x:1'), json),
    createdAt: fc.oneof(fc.constant(T0), json),
    modifiedAt: fc.constant(T0),
    datasetId: fc.constantFrom('urn:ds:1', 'bad'),
    instanceId: fc.constantFrom('urn:ngsi-ld:attribute:instance:f1', 'urn:ngsi-ld:attribute:instance:f2', 'x'),
  },
  { requiredKeys: [] },
);
const data = fc
  .record(
    {
      id: fc.oneof(fc.constantFrom('urn:ngsi-ld:F:1', 'urn:ngsi-ld:F:2', 'urn:ngsi-ld:Subscription:F', 'not a uri'), json),
      type: fc.oneof(name, fc.array(name, { maxLength: 2 }), fc.constant('Subscription'), fc.constant('ContextSourceRegistration')),
      createdAt: fc.oneof(fc.constant(T0), json),
      modifiedAt: fc.constant(T0),
      attr: name,
      op: fc.constantFrom('created', 'modified', 'deleted', 'replaced', 'x'),
      at: fc.oneof(fc.constant(T0), json),
      instance,
      entities: fc.array(fc.record({ type: name }), { maxLength: 2 }),
      notification: fc.record({ endpoint: fc.record({ uri: fc.constantFrom('http://127.0.0.1:9/n', 'x') }), timesSent: json }),
      information: fc.array(fc.record({ entities: fc.array(fc.record({ type: name }), { maxLength: 1 }) }), { maxLength: 1 }),
      endpoint: fc.constant('http://127.0.0.1:9/r'),
      q: fc.constantFrom('https://ex%2Eorg/a>1', 'a>', '((', 'https://ex%2Eorg/a=="x'),
    },
    { requiredKeys: [] },
  )
  .chain((d) => fc.dictionary(name, instance, { maxKeys: 2 }).map((attrs) => ({ ...attrs, ...d })));
const record = fc.record(
  {
    kind: fc.constantFrom('entity', 'subscription', 'registration', 'temporalEntity', 'temporalInstance', 'header', 'other'),
    tenant: fc.constantFrom('', 'Acme', 'bad tenant', 'x'.repeat(60)),
    data: fc.oneof(data, json),
  },
  { requiredKeys: ['kind'] },
);
const line = fc.oneof(
  { weight: 8, arbitrary: record.map((r) => JSON.stringify(r)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: json.map((v) => JSON.stringify(v)) },
);

t.test('any stream: the import ends, each line imported or refused once, the store still serves', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-import-fuzz-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await fc.assert(
    fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 12 }), async (lines) => {
      const text = lines.map((l) => l.replace(/[\r\n]/g, ' ')).join('\n') + '\n';
      const out = await importInto(dir, text);
      const refused = out.refusedLines;
      if (new Set(refused).size !== refused.length) throw new Error(`a line refused twice: ${out.err}`);
      for (const n of refused) if (n < 1 || n > lines.length) throw new Error(`line ${n} does not exist: ${out.err}`);
      if (out.line('created rows (history)') === undefined) throw new Error(`no report: ${out.err}`);
      if (/error: /.test(out.err)) throw new Error(`an unexpected error: ${out.err}`);
    }),
    { seed: SEED, numRuns: RUNS },
  );
  const broker = await startBroker(['--dbDir', dir, '--troe', 'embdb']);
  t.teardown(() => broker.stop());
  t.equal((await call(broker, 'GET', `${NGSI}/entities?type=https%3A%2F%2Fex.org%2Fa`)).status, 200);
});
