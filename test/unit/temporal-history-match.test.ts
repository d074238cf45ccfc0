// q and geo-queries on the history (CIM 009 v1.8 §5.7.4): an entity matches when the state its history gives at
// some instant of the window satisfies the filter; the state carried in from before the window counts.
import t from 'tap';
import { matchesAtSomeInstant, type HistoryMatchInput } from '../../src/ngsild/temporal/history-match.js';
import { parseQ } from '../../src/ngsild/query/q-parser.js';
import { compileQ } from '../../src/ngsild/query/q-eval.js';
import type { HistoryInstance, TemporalEntityRecord } from '../../src/history/contract.js';

const V = 'https://uri.etsi.org/ngsi-ld/default-context/';
const expand = (term: string): string => (term.includes(':') ? term : V + term);
const q = (text: string) => compileQ(parseQ(text), expand);
const rec: TemporalEntityRecord = {
  id: 'urn:ngsi-ld:M:1',
  type: [V + 'M'],
  createdAt: '2024-01-01T00:00:00Z',
  modifiedAt: '2024-01-01T00:00:00Z',
};
let seq = 0;
const at = (minute: number): string => `2024-01-01T00:${String(minute).padStart(2, '0')}:00.000Z`;
function inst(value: unknown, minute: number, extra: Partial<HistoryInstance> = {}): HistoryInstance {
  return { type: 'Property', value, instanceId: `urn:i:${++seq}`, createdAt: at(minute), modifiedAt: at(minute), ...extra };
}
function gone(minute: number): HistoryInstance {
  return {
    type: 'Property',
    value: 'urn:ngsi-ld:null',
    instanceId: `urn:i:${++seq}`,
    createdAt: at(minute),
    modifiedAt: at(minute),
    deletedAt: at(minute),
  };
}
const input = (inside: Record<string, HistoryInstance[]>, before: Record<string, HistoryInstance[]> = {}): HistoryMatchInput => ({
  rec,
  before,
  inside: Object.fromEntries(Object.entries(inside).map(([k, v]) => [V + k, v])),
  timeOf: (i) => Date.parse(i.createdAt),
});

t.test('a value held at any instant of the window matches, the current (last) one need not', async (t) => {
  const history = { power: [inst(5, 1), inst(50, 2), inst(7, 3)] };
  t.ok(matchesAtSomeInstant(input(history), q('power>40')));
  t.notOk(matchesAtSomeInstant(input(history), q('power>60')));
});

t.test('conjunctions hold at one instant: two values never held together do not match', async (t) => {
  const history = { a: [inst(1, 1), inst(0, 3)], b: [inst(1, 4)] };
  t.notOk(matchesAtSomeInstant(input(history), q('a==1;b==1')), 'a was 1 only before b became 1');
  t.ok(matchesAtSomeInstant(input(history), q('a==0;b==1')));
});

t.test('the state carried in from before the window is judged at the window start', async (t) => {
  const before = { [V + 'power']: [inst(99, 0)] };
  t.ok(matchesAtSomeInstant({ rec, before, inside: {}, timeOf: (i) => Date.parse(i.createdAt) }, q('power==99')));
  t.notOk(matchesAtSomeInstant({ rec, before, inside: {}, timeOf: (i) => Date.parse(i.createdAt) }, q('power==1')));
});

t.test('a tombstone removes the attribute: !attr matches after a deletion, attr no longer', async (t) => {
  const history = { power: [inst(3, 1), gone(2)] };
  t.ok(matchesAtSomeInstant(input(history), q('!power')));
  t.ok(matchesAtSomeInstant(input({ power: [gone(2)] }, { [V + 'power']: [inst(3, 1)] }), q('power==3')), 'held at the window start');
  t.notOk(matchesAtSomeInstant(input({ power: [gone(2)] }), q('power')));
});

t.test('instances of other datasetIds are kept apart; instances of one instant apply together', async (t) => {
  const history = { power: [inst(1, 1), inst(2, 1, { datasetId: 'urn:d:x' }), inst(3, 2)] };
  t.ok(matchesAtSomeInstant(input(history), q('power==2')), 'the datasetId instance is part of the state');
  const sameInstant = { a: [inst(1, 1), inst(2, 2)], b: [inst(2, 2)] };
  t.notOk(matchesAtSomeInstant(input({ a: [inst(1, 1)], b: [inst(5, 1)] }), q('a==1;!b')), 'b arrived with a');
  t.ok(matchesAtSomeInstant(input(sameInstant), q('a==1;!b')), 'before the second instant b did not exist');
});

t.test('an entity without instances of the filtered attributes is judged once, on the state without them', async (t) => {
  t.ok(matchesAtSomeInstant(input({}), q('!power')));
  t.notOk(matchesAtSomeInstant(input({}), q('power')));
});

t.test('an instance at the window start replaces the carried-in value before the start is judged', async (t) => {
  const before = { [V + 'power']: [inst(90, 1)] };
  const inside = { [V + 'power']: [inst(20, 2)] };
  const m = (text: string): boolean =>
    matchesAtSomeInstant({ rec, before, inside, timeOf: (i) => Date.parse(i.createdAt), start: Date.parse(at(2)) }, q(text));
  t.notOk(m('power==90'), '90 was replaced at the very start');
  t.ok(m('power==20'));
});
