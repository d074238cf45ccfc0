// The importer's history batches (seed 001 §7 "a history batch with an instanceId already present: refused as a
// whole", §8 one transaction per batch of 500) on each history: embdb, and tsdb (QuestDB, test/services/questdb.sh).
// An instanceId is present whatever createdAt it had: the same id at another time is refused too.
import t from 'tap';
import { startBroker, call, NGSI } from './helpers/broker.js';
import { importTarget, importWith } from './helpers/import.js';

const EX = 'https://example.org/';
const T0 = '2023-11-14T22:13:20.123Z';
const T1 = '2023-11-14T23:00:00.000Z';
const THING = 'urn:ngsi-ld:Thing:1';

const entity = {
  kind: 'entity',
  data: {
    id: THING,
    type: `${EX}Thing`,
    createdAt: T0,
    modifiedAt: T0,
    [`${EX}n`]: { type: 'Property', value: 0, createdAt: T0, modifiedAt: T0 },
  },
};
const ti = (n: number, at = T0): Record<string, unknown> => ({
  kind: 'temporalInstance',
  data: {
    id: THING,
    type: `${EX}Thing`,
    attr: `${EX}n`,
    op: 'created',
    instance: { instanceId: `urn:ngsi-ld:attribute:instance:c${n}`, createdAt: at, modifiedAt: at, type: 'Property', value: n },
  },
});

for (const troe of ['embdb', 'tsdb'] as const) {
  t.test(`--troe ${troe}`, async (t) => {
    process.env.LDB_TEST_TROE = troe;
    t.teardown(() => delete process.env.LDB_TEST_TROE);

    t.test('an instanceId present at another createdAt refuses its batch whole', async (t) => {
      const target = importTarget(t);
      const first = await importWith(target.args, [entity, ti(1, T0)]);
      t.equal(first.anyRefused, false, first.err);
      const out = await importWith(target.args, [ti(2, T1), ti(1, T1), ti(3, T1)]);
      t.equal(out.line('temporal instances'), 'temporal instances: 0 imported, 3 refused');
      t.match(
        out.err,
        /line 2: history of urn:ngsi-ld:Thing:1 refused with its batch \(lines 1 to 3\): instanceId urn:ngsi-ld:attribute:instance:c1 of urn:ngsi-ld:Thing:1 is present already/,
      );
      const broker = await startBroker(target.args);
      t.teardown(() => broker.stop());
      const te = await call(broker, 'GET', `${NGSI}/temporal/entities/${THING}`);
      t.equal(te.status, 200, te.text);
      t.same(
        te.json[`${EX}n`].map((i: { instanceId: string; value: number }) => [i.instanceId, i.value]),
        [['urn:ngsi-ld:attribute:instance:c1', 1]],
        'nothing of the refused batch written',
      );
    });

    t.test('an instanceId twice in one batch, and an entity event already there, refuse the batch', async (t) => {
      const target = importTarget(t);
      const twice = await importWith(target.args, [entity, ti(1), ti(2, T1), ti(1, T1)]);
      t.equal(twice.line('temporal instances'), 'temporal instances: 0 imported, 3 refused');
      t.match(twice.err, /instanceId urn:ngsi-ld:attribute:instance:c1 of urn:ngsi-ld:Thing:1 is (present already|twice in the batch)/);
      const event = { kind: 'temporalEntity', data: { id: THING, type: `${EX}Thing`, op: 'created', at: T0 } };
      t.equal((await importWith(target.args, [event, ti(4)])).anyRefused, false);
      const again = await importWith(target.args, [event, ti(5)]);
      t.equal(again.line('temporal entity events'), 'temporal entity events: 0 imported, 1 refused');
      t.equal(again.line('temporal instances'), 'temporal instances: 0 imported, 1 refused');
      t.match(again.err, /entity urn:ngsi-ld:Thing:1 has a created event at 2023-11-14T22:13:20.123Z already/);
      // The same id in another batch of a new stream, after the first one went in: refused too.
      const later = await importWith(target.args, [ti(4, T1)]);
      t.match(later.err, /instanceId urn:ngsi-ld:attribute:instance:c4 of urn:ngsi-ld:Thing:1 is present already/);
    });

    t.test('batches of 500: a refused batch leaves the batches before it', async (t) => {
      const target = importTarget(t);
      const stream: Array<Record<string, unknown>> = [entity];
      const at = (i: number): string => new Date(Date.parse(T0) + i * 1000).toISOString();
      for (let i = 1; i <= 500; i++) stream.push(ti(i, at(i)));
      // Line 502, the first of the second batch (the first: lines 2 to 501), repeats an instanceId of the first batch.
      stream.push(ti(7, T1));
      for (let i = 501; i <= 999; i++) stream.push(ti(i, at(i)));
      const out = await importWith(target.args, stream);
      t.equal(out.line('temporal instances'), 'temporal instances: 500 imported, 500 refused');
      t.match(out.err, /refused with its batch \(lines 502 to 1001\): instanceId urn:ngsi-ld:attribute:instance:c7 /);
      const broker = await startBroker(target.args);
      t.teardown(() => broker.stop());
      const te = await call(broker, 'GET', `${NGSI}/temporal/entities/${THING}?lastN=1`);
      t.match(te.json[`${EX}n`], [{ instanceId: 'urn:ngsi-ld:attribute:instance:c500', value: 500 }]);
    });
  });
}
