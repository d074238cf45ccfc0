// q with names resolved (ngsild/query/q-resolve.ts), as a store query carries it: compiled without a @context it
// matches what the tree as written matches with the request's @context, expandValues and VocabProperty included.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { parseQ } from '../../src/ngsild/query/q-parser.js';
import { compileQ } from '../../src/ngsild/query/q-eval.js';
import { asWritten, resolveQ } from '../../src/ngsild/query/q-resolve.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { repoPath } from '../helpers/repo.js';

const entities = JSON.parse(readFileSync(repoPath('test/fixtures/query/entities.json'), 'utf8')) as StoredEntity[];
const CORE = new Set(['observedAt', 'unitCode', 'datasetId', 'createdAt', 'modifiedAt', 'location']);
const expand = (term: string): string =>
  CORE.has(term) ? `https://uri.etsi.org/ngsi-ld/${term}` : term.includes(':') ? term : `https://example.org/ns/${term}`;

// Every q of the evaluator's own tests (query-eval.test.ts), and a few more paths through members and lists.
const source = readFileSync(repoPath('test/unit/query-eval.test.ts'), 'utf8');
const fromEvalTests = [...source.matchAll(/\['((?:[^'\\]|\\.)+)', \[/g)].map((m) => m[1]!.replace(/\\'/g, "'"));
const QS = [
  ...fromEvalTests,
  'speed.https://uri.etsi.org/ngsi-ld/observedAt',
  'isParked.providedBy.observedAt',
  'modifiedAt>2020-01-01T00:00:00Z',
  'gender=="Male"|speed>1;!status',
  '(name~=^bl|name!~=x);address[city]!="Paris"',
];

t.test('a resolved q matches what the q as written matches under its @context', async (t) => {
  t.ok(fromEvalTests.length > 100, `${fromEvalTests.length} expressions of query-eval.test.ts`);
  for (const q of QS) {
    const ast = parseQ(q);
    const before = JSON.stringify(ast);
    const resolved = resolveQ(ast, expand);
    t.equal(JSON.stringify(ast), before, `${q}: the parsed tree is left as it was`);
    t.same(JSON.parse(JSON.stringify(resolved)), resolved, `${q}: plain data`);
    const asParsed = compileQ(ast, expand);
    const asResolved = compileQ(resolved, asWritten);
    t.same(entities.map(asResolved), entities.map(asParsed), q);
  }
});

t.test('expandValues is carried by the resolved tree: its comparisons are marked vocab', async (t) => {
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
  for (const q of [
    'kind=="Sedan"',
    'kind=="Coupe","Sedan"',
    'kind=="https://example.org/ns/Sedan"',
    'label=="Sedan"',
    'label=="https://example.org/ns/Sedan"',
    'size==4',
    'kind!="Coupe"',
    'kind=="Sedan";label=="Sedan"',
  ]) {
    for (const values of [undefined, listed]) {
      const ast = parseQ(q);
      t.equal(
        compileQ(resolveQ(ast, expand, values), asWritten)(doc),
        compileQ(ast, expand, values)(doc),
        `${q} ${values === undefined ? 'without' : 'with'} expandValues`,
      );
    }
  }
  const marked = resolveQ(parseQ('kind=="Sedan"'), expand, listed);
  t.match(marked, {
    kind: 'compare',
    vocab: true,
    path: { attr: ['https://example.org/ns/kind'] },
    value: { value: 'Sedan', expanded: 'https://example.org/ns/Sedan' },
  });
  t.notOk('vocab' in resolveQ(parseQ('label=="Sedan"'), expand, listed), 'an attribute expandValues does not list is not marked');
});

t.test('orderBy names what each key sorts on with names expanded, for a store that sorts natively', async (t) => {
  const { parseOrderBy } = await import('../../src/ngsild/query/order-by.js');
  const order = parseOrderBy('speed.observedAt;desc,id,address[city]', expand);
  t.same(order.targets, [
    { attr: ['https://example.org/ns/speed', 'https://uri.etsi.org/ngsi-ld/observedAt'], compound: [] },
    'id',
    { attr: ['https://example.org/ns/address'], compound: ['city'] },
  ]);
});
