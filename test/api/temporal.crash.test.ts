// --troe embdb records history in the write's own LMDB transaction (issue 5): a broker killed with SIGKILL in the
// middle of concurrent writes restarts with every current attribute value matched by its latest history instance,
// and no instance of a write the current state does not hold.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnBroker, startBroker, call, NGSI, type Broker } from './helpers/broker.js';

const ENTITIES = 12;
const WRITERS = 8;
const NULL = 'urn:ngsi-ld:null';
const idOf = (i: number): string => `urn:ngsi-ld:Crash:${i}`;

/** One writer: PATCHes of two attributes at once, batch upserts, attribute deletes and entity delete/re-create. */
async function writer(broker: Broker, w: number, stop: { now: boolean; answered: number }, sent: Set<number>): Promise<number> {
  let done = 0;
  for (let k = 0; !stop.now; k++) {
    const v = w * 1_000_000 + k;
    sent.add(v);
    const i = (w * 7 + k) % ENTITIES;
    const p = { type: 'Property', value: v };
    try {
      switch (k % 6) {
        case 0:
        case 1:
        case 2:
          await call(broker, 'POST', `${NGSI}/entities/${idOf(i)}/attrs`, { body: { a: p, b: p } });
          break;
        case 3:
          await call(broker, 'POST', `${NGSI}/entityOperations/upsert?options=update`, {
            body: [0, 1, 2].map((j) => ({ id: idOf((i + j) % ENTITIES), type: 'Crash', a: p })),
          });
          break;
        case 4:
          await call(broker, 'DELETE', `${NGSI}/entities/${idOf(i)}/attrs/b`);
          break;
        default:
          if (k % 12 === 5) await call(broker, 'DELETE', `${NGSI}/entities/${idOf(i)}`);
          else await call(broker, 'POST', `${NGSI}/entityOperations/upsert`, { body: [{ id: idOf(i), type: 'Crash', a: p, b: p }] });
      }
      done++;
      stop.answered++;
    } catch {
      return done; // the broker is gone
    }
  }
  return done;
}

t.test('SIGKILL during concurrent writes leaves history and current state in step', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-troe-crash-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const args = ['--dbDir', dir, '--troe', 'embdb'];
  const broker = await spawnBroker(args);
  const seed = await call(broker, 'POST', `${NGSI}/entityOperations/create`, {
    body: Array.from({ length: ENTITIES }, (_, i) => ({
      id: idOf(i),
      type: 'Crash',
      a: { type: 'Property', value: -1 },
      b: { type: 'Property', value: -1 },
    })),
  });
  t.equal(seed.status, 201, seed.text);
  const stop = { now: false, answered: 0 };
  const sent = new Set<number>([-1]);
  const writers = Array.from({ length: WRITERS }, (_, w) => writer(broker, w, stop, sent));
  // Killed while the writers run: once enough writes were answered (a loaded machine answers fewer), or at 4 s.
  const until = Date.now() + 4000;
  while (stop.answered < 300 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  broker.proc.kill('SIGKILL');
  await broker.stop();
  stop.now = true;
  const writes = (await Promise.all(writers)).reduce((x, y) => x + y, 0);
  t.ok(writes > 20, `${writes} writes answered before the kill`);

  // What the killed process left, read by a broker in this process on the same files.
  const again = await startBroker(args);
  t.teardown(() => again.stop());
  let checkedAttrs = 0;
  for (let i = 0; i < ENTITIES; i++) {
    const id = idOf(i);
    const cur = await call(again, 'GET', `${NGSI}/entities/${id}`);
    const hist = await call(again, 'GET', `${NGSI}/temporal/entities/${id}?lastN=1`);
    t.equal(hist.status, 200, `${id} has a history`);
    const all = await call(again, 'GET', `${NGSI}/temporal/entities/${id}?lastN=1000`);
    for (const name of ['a', 'b']) {
      for (const inst of all.json[name] ?? [])
        if (inst.value !== NULL && !sent.has(inst.value)) t.fail(`${id} ${name}: instance of a value never sent: ${inst.value}`);
      const latest = hist.json[name]?.[0];
      if (cur.status === 200 && cur.json[name] !== undefined) {
        t.equal(latest?.value, cur.json[name].value, `${id} ${name}: the latest instance is the current value`);
        checkedAttrs++;
      } else if (latest !== undefined) {
        t.equal(latest.value, NULL, `${id} ${name}: absent now, so its latest instance is a tombstone`);
        t.ok(latest.deletedAt, 'the tombstone carries deletedAt');
      }
    }
    if (cur.status === 404) t.ok(hist.json.deletedAt, `${id}: deleted now, deleted in history`);
    else t.equal(hist.json.deletedAt, undefined, `${id}: exists now, not deleted in history`);
  }
  t.ok(checkedAttrs > 0, `${checkedAttrs} current attributes compared`);
  const served = await call(again, 'POST', `${NGSI}/entities`, { body: { id: 'urn:ngsi-ld:Crash:after', type: 'Crash' } });
  t.equal(served.status, 201, 'the restarted broker serves writes');
});
