// docdb answers random queries as the evaluators do (issue 17): entities whose attributes hold every kind of q
// target (numbers, strings ASCII and not, booleans, dates, arrays, lists, language maps, JSON, relationships,
// vocabs, long strings, sub-attributes) and scopes, queried with random q, scopeQ and type expressions, each
// compared, with its count and a page, against ngsild/query's evaluators over everything written: what the server
// filters exactly and what it only prefilters must both give exactly the matches.
import t from 'tap';
import { storeOpen } from '../../src/plugins/store/docdb/index.js';
import type { StoredEntity, EntitySelectionQuery } from '../../src/store/contract.js';
import { parseQ } from '../../src/ngsild/query/q-parser.js';
import { resolveQ, asWritten } from '../../src/ngsild/query/q-resolve.js';
import { compileQ } from '../../src/ngsild/query/q-eval.js';
import { compileScopeQ, parseScopeQ } from '../../src/ngsild/query/scopeq.js';
import { compileTypeExpression, parseTypeExpression, resolveTypeExpression } from '../../src/ngsild/query/type-expression.js';
import { rng } from './helpers/rng.js';
import { dropDatabases, freshDbName, mongoUrl } from '../api/helpers/docdb.js';

const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const NS = 'https://example.org/ns/';
const T0 = '2026-01-01T00:00:00Z';
const expand = (term: string): string => (term.includes(':') ? term : NS + term);
const r = rng(17);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

const SCALARS: unknown[] = [
  0,
  1,
  5,
  7.5,
  -3,
  20,
  100,
  'a',
  'b',
  'n1',
  'n2',
  'zz',
  'é',
  '日本',
  true,
  false,
  '2024-01-01T00:00:00Z',
  '2025-06-01',
  'x'.repeat(300),
];

function instanceOf(): Record<string, unknown> {
  switch (Math.floor(r() * 9)) {
    case 0:
      return { type: 'Relationship', object: pick(['urn:a', 'urn:b', 'n1']) };
    case 1:
      return { type: 'VocabProperty', vocab: pick([NS + 'Sedan', 'Sedan', NS + 'Van']) };
    case 2:
      return { type: 'LanguageProperty', languageMap: { en: pick(['n1', 'a']), fr: pick(['b', 'é']) } };
    case 3:
      return { type: 'JsonProperty', json: { k: pick(SCALARS) } };
    case 4:
      return { type: 'ListProperty', valueList: [pick(SCALARS), pick(SCALARS)] };
    case 5:
      return { type: 'Property', value: [pick(SCALARS), pick(SCALARS)] };
    case 6:
      return { type: 'Property', value: { k: pick(SCALARS) } };
    case 7:
      return { type: 'Property', value: pick(SCALARS), [NS + 'sub']: { type: 'Property', value: pick(SCALARS) } };
    default:
      return { type: 'Property', value: pick(SCALARS), ...(r() < 0.3 ? { datasetId: 'urn:ds:1' } : {}) };
  }
}

const ATTRS = ['p', 'q', 'v'];
const data: StoredEntity[] = Array.from({ length: 80 }, (_, k) => {
  const e: StoredEntity = {
    id: `urn:ngsi-ld:E:${String(k).padStart(3, '0')}`,
    type: [NS + pick(['A', 'B', 'C'])],
    createdAt: T0,
    modifiedAt: T0,
  };
  if (r() < 0.3) e.type.push(NS + 'D');
  for (const a of ATTRS) if (r() < 0.7) e[NS + a] = Array.from({ length: 1 + Math.floor(r() * 2) }, instanceOf) as never;
  if (r() < 0.5) e.scope = [pick(['/a', '/a/b', '/a/c', '/b', '/a/b/c'])];
  return e;
});

const LITERALS = [
  '0',
  '1',
  '5',
  '7.5',
  '-3',
  '20',
  '100',
  '"a"',
  '"n1"',
  '"zz"',
  '"é"',
  'true',
  'false',
  '2024-01-01T00:00:00Z',
  '2025-06-01',
  '"Sedan"',
  'urn:a',
  '1..20',
  '"a".."n2"',
  '1,5,20',
  '"a","b"',
];
const PATHS = ['p', 'q', 'v', 'p.sub', 'p[k]', 'q[en]', 'p.datasetId', 'modifiedAt'];

function randomQ(depth = 0): string {
  if (depth < 2 && r() < 0.3) return `(${randomQ(depth + 1)}${pick([';', '|'])}${randomQ(depth + 1)})`;
  const path = pick(PATHS);
  switch (Math.floor(r() * 5)) {
    case 0:
      return path;
    case 1:
      return '!' + path;
    case 2:
      return `${path}${pick(['~=', '!~='])}${pick(['^n', 'a', '.*é'])}`;
    default:
      return `${path}${pick(['==', '!=', '>', '>=', '<', '<='])}${pick(LITERALS)}`;
  }
}

t.test('random q, scopeQ and types: the matches, the count and a page are those of the evaluators', async (t) => {
  const dbName = freshDbName();
  const store = await storeOpen({ options: { dbURI: mongoUrl(), dbName }, primary: true, log });
  t.teardown(async () => {
    await store.close();
    await dropDatabases(dbName);
  });
  const outcomes = await store.mutateEntities(
    '',
    data.map((e) => ({ id: e.id, mutation: () => ({ next: e, result: undefined }) })),
  );
  t.ok(outcomes.every((o) => o.ok));
  let compared = 0;
  let nonEmpty = 0;
  for (let i = 0; i < 250; i++) {
    const sel: EntitySelectionQuery = {};
    const tests: Array<(e: StoredEntity) => boolean> = [];
    let text = '';
    try {
      const qText = randomQ();
      sel.q = resolveQ(parseQ(qText), expand, r() < 0.3 ? new Set([NS + 'v']) : undefined);
      text = `q=${qText}`;
      tests.push(compileQ(sel.q, asWritten));
    } catch {
      continue; // a q refused (e.g. an ordering on a list) is the parser's business
    }
    if (r() < 0.3) {
      const s = pick(['/a/#', '/a/+', '/a;/b', '/#', '/a/b,/b']);
      sel.scopeQ = parseScopeQ(s);
      text += ` scopeQ=${s}`;
      const f = compileScopeQ(sel.scopeQ);
      tests.push((e) => f(e.scope));
    }
    if (r() < 0.3) {
      const ty = pick(['A', 'B,C', 'A;D', '(A;D)|C']);
      sel.type = resolveTypeExpression(parseTypeExpression(ty), expand);
      text += ` type=${ty}`;
      const f = compileTypeExpression(sel.type, asWritten);
      tests.push((e) => f.matches(e.type));
    }
    const expected = data.filter((e) => tests.every((f) => f(e))).map((e) => e.id);
    const all = await store.queryEntities('', { ...sel, limit: 1000, offset: 0, count: true });
    const got = all.entities.map((e) => e.id).sort();
    if (got.join() !== [...expected].sort().join() || all.count !== expected.length) {
      t.same({ got, count: all.count }, { got: [...expected].sort(), count: expected.length }, text);
      continue;
    }
    const page = await store.queryEntities('', { ...sel, limit: 3, offset: 2, count: false });
    t.same(
      page.entities.map((e) => e.id),
      all.entities.slice(2, 5).map((e) => e.id),
      `${text}: a page`,
    );
    compared++;
    if (expected.length > 0) nonEmpty++;
  }
  t.ok(compared > 150, `${compared} queries compared`);
  t.ok(nonEmpty > 50, `${nonEmpty} of them match something`);
});
