// The importer's history batch into embdb (seed 001 §7: a batch with an instanceId already present is refused whole;
// issue 21): the check is one lookup per instance in the instanceId index, not a scan of the attribute's history,
// which grew with every batch before (an attribute of a million instances was read whole for each batch of 500).
import t, { type Test } from 'tap';
import { tempEmbdb } from './helpers/embdb.js';
import type { EmbdbHistory } from '../../src/plugins/store/embdb/history.js';
import type { ImportedHistoryRecord } from '../../src/history/contract.js';

const ID = 'urn:ngsi-ld:Meter:1';
const TYPE = ['https://example.org/Meter'];
const ATTR = 'https://example.org/kwh';
const T0 = Date.parse('2024-01-01T00:00:00.000Z');
const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

function open(t: Test): EmbdbHistory {
  const store = tempEmbdb(t, { troe: 'embdb' });
  return store.history as EmbdbHistory;
}

const instance = (n: number, at = T0 + n * 1000, id = ID): ImportedHistoryRecord => {
  const iso = new Date(at).toISOString();
  return {
    kind: 'instance',
    tenant: '',
    id,
    type: TYPE,
    attrIri: ATTR,
    instance: { instanceId: `urn:ngsi-ld:attribute:instance:imported-${n}`, type: 'Property', value: n, createdAt: iso, modifiedAt: iso },
  } as ImportedHistoryRecord;
};

/** Keys and entries of the instances by time read while `fn` runs (the scan the check must not do). */
async function instanceReads(h: EmbdbHistory, fn: () => Promise<unknown>): Promise<number> {
  const inst = (
    h as unknown as { inst: { getKeys: (...a: unknown[]) => Iterable<unknown>; getRange: (...a: unknown[]) => Iterable<unknown> } }
  ).inst;
  const { getKeys, getRange } = inst;
  let read = 0;
  const counted =
    (f: (...a: unknown[]) => Iterable<unknown>) =>
    (...a: unknown[]): Iterable<unknown> => {
      const it = f.apply(inst, a);
      return {
        *[Symbol.iterator]() {
          for (const x of it) {
            read++;
            yield x;
          }
        },
      };
    };
  inst.getKeys = counted(getKeys);
  inst.getRange = counted(getRange);
  try {
    await fn();
  } finally {
    inst.getKeys = getKeys;
    inst.getRange = getRange;
  }
  return read;
}

t.test('a batch with an instanceId present (at another time) is refused whole, without reading the history', async (t) => {
  const h = open(t);
  const first = Array.from({ length: 2000 }, (_, i) => instance(i));
  for (let i = 0; i < first.length; i += 500) t.same(await h.importBatch(first.slice(i, i + 500)), {});
  // Three new instances and one whose instanceId is present, under another createdAt.
  const batch = [instance(5000), instance(5001), instance(1234, T0 + 9_999_000), instance(5002)];
  let outcome: { refused?: string } = {};
  const read = await instanceReads(h, async () => {
    outcome = await h.importBatch(batch);
  });
  t.same(outcome, { refused: `instanceId urn:ngsi-ld:attribute:instance:imported-1234 of ${ID} is present already` });
  t.equal(read, 0, 'no scan of the 2,000 instances of the attribute');
  const inst = (h as unknown as { inst: { getKeysCount: () => number } }).inst;
  t.equal(inst.getKeysCount(), 2000, 'nothing of the batch written');
  t.same(await h.importBatch([instance(5000), instance(5001), instance(5002)]), {}, 'the batch without it goes in');
});

t.test('an instanceId twice in one batch, or of another entity or attribute', async (t) => {
  const h = open(t);
  t.match(await h.importBatch([instance(1), instance(1, T0 + 5000)]), { refused: /imported-1 of .* is present already/ });
  t.same(await h.importBatch([instance(1)]), {});
  t.same(await h.importBatch([instance(1, T0, 'urn:ngsi-ld:Meter:2')]), {}, 'the same id on another entity is its own');
});

t.test('a deleted temporal entity frees its instanceIds; an older history gets its index at open', async (t) => {
  const h = open(t);
  t.same(await h.importBatch([instance(1), instance(2)]), {});
  t.equal(await h.deleteTemporalEntity('', ID), true);
  t.same(await h.importBatch([instance(1)]), {}, 'imported again after the delete');
  // A history written before the index: the index emptied, as an older store has none.
  const iids = (h as unknown as { iids: { clearSync: () => void; getKeysCount: () => number } }).iids;
  iids.clearSync();
  t.equal(await h.backfillInstanceIdIndex(log), 1, 'the one instance indexed');
  t.equal(await h.backfillInstanceIdIndex(log), 0, 'once');
  t.match(await h.importBatch([instance(1, T0 + 77_000)]), { refused: /imported-1 of .* is present already/ });
});

t.test('an instance with an imported id (no time in it) is modified and deleted by one indexed read, not a scan', async (t) => {
  const h = open(t);
  const first = Array.from({ length: 2000 }, (_, i) => instance(i));
  for (let i = 0; i < first.length; i += 500) t.same(await h.importBatch(first.slice(i, i + 500)), {});
  const iid = (n: number): string => `urn:ngsi-ld:attribute:instance:imported-${n}`;
  let updated: unknown;
  const read = await instanceReads(h, async () => {
    updated = await h.updateInstance('', ID, ATTR, iid(1500), { type: 'Property', value: -1 }, new Date(T0 + 9_000_000).toISOString());
  });
  t.equal(updated, 'updated');
  t.equal(read, 0, 'no scan of the 2,000 instances of the attribute to find it');
  t.equal(await h.updateInstance('', ID, ATTR, iid(99_999), { type: 'Property', value: 0 }, new Date().toISOString()), 'notFound');
  t.equal(
    await h.updateInstance('', ID, ATTR, iid(7), { type: 'Relationship', object: 'urn:x' } as never, new Date().toISOString()),
    'typeMismatch',
  );
  let deleted = false;
  const readOnDelete = await instanceReads(h, async () => {
    deleted = await h.deleteInstance('', ID, ATTR, iid(700));
  });
  t.equal(deleted, true);
  t.ok(readOnDelete <= 2, `a key or two (does the attribute still have instances?), not the 700 before it (${readOnDelete})`);
  t.equal(await h.deleteInstance('', ID, ATTR, iid(700)), false, 'gone');
  const inst = (h as unknown as { inst: { getKeysCount: () => number } }).inst;
  t.equal(inst.getKeysCount(), 1999);
});
