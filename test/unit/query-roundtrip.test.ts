import t, { type Test } from 'tap';
import { parseQ, printQ, type QLiteral, type QNode, type QPath, type QUri, type QValue } from '../../src/ngsild/query/q-parser.js';
import { parseTypeExpression, printTypeExpression, type TypeExpression } from '../../src/ngsild/query/type-expression.js';
import { parseScopeQ, printScopeQ, type ScopeQuery } from '../../src/ngsild/query/scopeq.js';
import type { Logical } from '../../src/ngsild/query/logical.js';
import { rng } from './helpers/rng.js';

// A seeded generator of valid q trees: printQ(tree) parsed back must give the same tree.

const NAMES = [
  'temperature',
  'speed',
  'brandName',
  'a',
  'x_1',
  'ex:temp',
  'https://example.org/ns#temp',
  'température',
  'Ωmega',
  'name-2',
  'observedAt',
];
const MEMBERS = ['city', '0', 'en', '*', 'airquality', 'PM2_5', 'a.b'];
const STRINGS = ['', 'red', 'a;b|c)', 'quote " and \\ back', 'é日本', 'line\nbreak', 'urn:ngsi-ld:X:1', '\u0001'];
const URIS = ['urn:ngsi-ld:Car:1', 'https://example.org/a.b?c=d#e', 'http://x.org/..', 'ex:Male'];

function gen(seed: number) {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const int = (n: number) => Math.floor(r() * n);

  const path = (): QPath => ({
    attr: Array.from({ length: 1 + int(3) }, () => pick(NAMES)),
    compound: r() < 0.3 ? Array.from({ length: 1 + int(3) }, () => pick(MEMBERS)) : [],
  });
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  const comparable = (kind = pick(['number', 'string', 'dateTime', 'date', 'time'] as const)): QLiteral => {
    switch (kind) {
      case 'number':
        return { kind, value: pick([0, 1, -1, 20, 3.25, -1e-7, 1e21, 123456789, int(1000) / 8]) };
      case 'string':
        return { kind, value: pick(STRINGS) };
      case 'dateTime':
        return {
          kind,
          value: `20${pad(int(100))}-${pad(1 + int(12))}-${pad(1 + int(28))}T${pad(int(24))}:${pad(int(60))}:${pad(int(60))}${pick(['Z', '.5Z', '+02:00', ''])}`,
        };
      case 'date':
        return { kind, value: `19${pad(int(100))}-${pad(1 + int(12))}-${pad(1 + int(28))}` };
      case 'time':
        return { kind, value: `${pad(int(24))}:${pad(int(60))}${pick([':00Z', ':59', '', ':30.25Z'])}` };
    }
  };
  const value = (): QLiteral | QUri => {
    const x = r();
    if (x < 0.15) return { kind: 'boolean', value: r() < 0.5 };
    if (x < 0.3) return { kind: 'uri', value: pick(URIS) };
    return comparable();
  };
  const equalityValue = (): QValue => {
    const x = r();
    if (x < 0.2) return { kind: 'list', items: Array.from({ length: 2 + int(3) }, value) };
    if (x < 0.4) {
      const kind = pick(['number', 'string', 'dateTime', 'date', 'time'] as const);
      return { kind: 'range', min: comparable(kind), max: comparable(kind) };
    }
    return value();
  };
  const term = (): QNode => {
    const x = r();
    if (x < 0.15) return { kind: 'exists', path: path() };
    if (x < 0.25) return { kind: 'notExists', path: path() };
    if (x < 0.4)
      return {
        kind: 'match',
        path: path(),
        negated: r() < 0.5,
        pattern: pick(['^a', '(x|y)+$', 'a;b', '[)|;]', '\\d{2,3}', '(?i)sensor']),
      };
    const op = pick(['==', '!=', '>', '>=', '<', '<='] as const);
    return { kind: 'compare', path: path(), op, value: op === '==' || op === '!=' ? equalityValue() : comparable() };
  };
  const node = (depth: number): QNode => {
    if (depth >= 4 || r() < 0.4) return term();
    return { kind: r() < 0.5 ? 'and' : 'or', terms: Array.from({ length: 2 + int(3) }, () => node(depth + 1)) };
  };
  return node(0);
}

t.test('1500 random q trees print to text that parses back to the same tree', async (t) => {
  let failures = 0;
  for (let seed = 1; seed <= 1500; seed++) {
    const tree = gen(seed);
    const text = printQ(tree);
    let back: QNode | undefined;
    try {
      back = parseQ(text);
    } catch (err) {
      failures++;
      t.fail(`seed ${seed}: ${text}: ${(err as Error).message}`);
      continue;
    }
    if (JSON.stringify(back) !== JSON.stringify(tree)) {
      failures++;
      t.same(back, tree, `seed ${seed}: ${text}`);
    }
    if (failures > 5) break;
  }
  t.equal(failures, 0, 'every printed tree parsed back equal');
});

function genLogical<A>(seed: number, atom: (r: () => number) => A): Logical<A> {
  const r = rng(seed);
  const node = (depth: number): Logical<A> => {
    if (depth >= 4 || r() < 0.4) return atom(r);
    return { kind: r() < 0.5 ? 'and' : 'or', terms: Array.from({ length: 2 + Math.floor(r() * 3) }, () => node(depth + 1)) };
  };
  return node(0);
}

function roundTrips<T>(t: Test, count: number, make: (seed: number) => T, print: (x: T) => string, parse: (s: string) => T): void {
  let failures = 0;
  for (let seed = 1; seed <= count && failures <= 5; seed++) {
    const tree = make(seed);
    const text = print(tree);
    try {
      const back = parse(text);
      if (JSON.stringify(back) !== JSON.stringify(tree)) {
        failures++;
        t.same(back, tree, `seed ${seed}: ${text}`);
      }
    } catch (err) {
      failures++;
      t.fail(`seed ${seed}: ${text}: ${(err as Error).message}`);
    }
  }
  t.equal(failures, 0, `${count} printed trees parsed back equal`);
}

const TYPES = ['Vehicle', 'ex:Car', 'https://example.org/ns/Bus.v2', 'urn:type:x', 'Émetteur', 'T_1'];
const LEVELS = ['Madrid', 'Gardens', 'a', '1', 'Köln', 'x.y', 'A-B', '+'];

t.test('1000 random type expressions print to text that parses back to the same tree', async (t) => {
  roundTrips<TypeExpression>(
    t,
    1000,
    (seed) => genLogical(seed, (r) => ({ kind: 'type', name: TYPES[Math.floor(r() * TYPES.length)]! })),
    printTypeExpression,
    parseTypeExpression,
  );
});

t.test('1000 random scope queries print to text that parses back to the same tree', async (t) => {
  roundTrips<ScopeQuery>(
    t,
    1000,
    (seed) =>
      genLogical(seed, (r) => {
        const levels = Array.from({ length: 1 + Math.floor(r() * 4) }, () => LEVELS[Math.floor(r() * LEVELS.length)]!);
        if (r() < 0.3) levels.push('#');
        return { kind: 'scope', levels };
      }),
    printScopeQ,
    parseScopeQ,
  );
});
