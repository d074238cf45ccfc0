// The change of a write given as a function (store/contract.ts MutationOutcome.change, issue 24): the store calls it
// only when an event or a history takes the change, and records exactly what it returns; the batch upsert's replace
// (replacedEntity, replaceChanges) stores and reports what replaceEntity does.
import t from 'tap';
import { tempEmbdb } from './helpers/embdb.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import type { WriteEvent } from '../../src/store/contract.js';
import { changeBetween, changeOf, type WriteChange } from '../../src/ngsild/entity/write-change.js';
import { replaceChanges, replacedEntity, replaceEntity } from '../../src/ngsild/entity/merge.js';
import { changeOfOutcome } from '../../src/store/kit/outcome-change.js';

const NS = 'https://example.org/ns/';
const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-02T00:00:00Z';

function room(id: string, attrs: Record<string, unknown>, at = T0): StoredEntity {
  const e: StoredEntity = { id, type: [NS + 'Room'], createdAt: at, modifiedAt: at };
  for (const [name, value] of Object.entries(attrs)) e[NS + name] = [{ type: 'Property', value, createdAt: at, modifiedAt: at }] as never;
  return e;
}

t.test('replacedEntity and replaceChanges are replaceEntity in two parts', async (t) => {
  const old = room('urn:r:1', { temperature: 20, humidity: 50 });
  const next = room('urn:r:1', { temperature: 21, pressure: 1000 }, T1);
  const whole = replaceEntity(old, next, T1);
  t.same({ entity: replacedEntity(old, next, T1), ...replaceChanges(old, next) }, whole);
  t.same(replaceChanges(old, next).deleted, [NS + 'humidity'], 'an attribute left out is reported deleted');
  t.equal(whole.entity.createdAt, T0, 'the entity keeps its createdAt');
});

t.test('changeOfOutcome: the function called, the value given, else the change between the states', async (t) => {
  const before = room('urn:r:1', { temperature: 20 });
  const after = room('urn:r:1', { temperature: 21 }, T1);
  const given = changeOf('replace', replaceChanges(before, after));
  t.equal(changeOfOutcome({ next: after, result: 0, change: given }, before, after), given);
  t.equal(changeOfOutcome({ next: after, result: 0, change: () => given }, before, after), given);
  t.same(changeOfOutcome({ next: after, result: 0 }, before, after), changeBetween(before, after));
});

t.test('embdb: a change function is called only when an event or a history takes it', async (t) => {
  for (const troe of ['none', 'embdb'] as const) {
    const store = tempEmbdb(t, { troe });
    await store.mutateEntities('', [{ id: 'urn:r:1', mutation: () => ({ next: room('urn:r:1', { temperature: 20 }), result: 0 }) }]);
    let calls = 0;
    const change = (): WriteChange => {
      calls++;
      return changeOf('replace', replaceChanges(room('urn:r:1', { temperature: 20 }), room('urn:r:1', { temperature: 21 })));
    };
    const replace = (): Array<{
      id: string;
      mutation: (c: StoredEntity | undefined) => { next: StoredEntity; result: number; change: () => WriteChange };
    }> => [
      { id: 'urn:r:1', mutation: (c) => ({ next: replacedEntity(c!, room('urn:r:1', { temperature: 21 }, T1), T1), result: 1, change }) },
    ];
    const outcomes = await store.mutateEntities('', replace());
    t.same(outcomes, [{ ok: true, result: 1 }]);
    t.equal(calls, troe === 'embdb' ? 1 : 0, `troe ${troe}, no events asked: ${troe === 'embdb' ? 'the history takes it' : 'not called'}`);
    const events: WriteEvent[] = [];
    await store.mutateEntities('', replace(), { events });
    t.equal(events.length, 1);
    t.equal(events[0]!.change.kind, 'replace', 'the event holds what the function returned');
    t.same(events[0]!.change.modified, [NS + 'temperature']);
    t.equal(calls, troe === 'embdb' ? 2 : 1, 'called once for the write whose event is asked');
    t.equal((await store.getEntity('', 'urn:r:1'))![NS + 'temperature']![0]!.value, 21);
  }
});
