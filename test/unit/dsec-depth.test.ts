// Policies are compiled recursively (canonical terms, logical constraints): one nested deeper than the bound is
// skipped with its reason, the others still compile; nothing a policy source holds can overflow the stack.
import t from 'tap';
import { compilePolicySet } from '../../src/plugins/auth/dsec/odrl/policy-set.js';
import { MAX_NESTING, nestedDeeperThan } from '../../src/plugins/auth/dsec/odrl/depth.js';
import { prefixesOf } from '../../src/plugins/auth/dsec/odrl/terms.js';

const anyone = (uid: string, constraint?: unknown): Record<string, unknown> => ({
  'odrl:uid': uid,
  'odrl:permission': {
    'odrl:action': 'odrl:read',
    'odrl:assignee': 'vc:any',
    'odrl:target': 'urn:x',
    ...(constraint === undefined ? {} : { 'odrl:constraint': constraint }),
  },
});

/** A logical constraint `levels` deep: odrl:and of odrl:and of ... of one plain constraint. */
function nestedAnd(levels: number): unknown {
  let c: unknown = { 'odrl:leftOperand': 'odrl:dateTime', 'odrl:operator': 'odrl:gt', 'odrl:rightOperand': '2000-01-01T00:00:00Z' };
  for (let i = 0; i < levels; i++) c = { 'odrl:and': [c] };
  return c;
}

/** A member `levels` deep. */
function nestedMember(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

t.test('a policy nested 100,000 deep is skipped with its reason; the others compile', async (t) => {
  for (const deep of [anyone('urn:deep', nestedAnd(100_000)), { ...anyone('urn:deep'), 'x:junk': nestedMember(100_000) }]) {
    const set = compilePolicySet([[anyone('urn:before'), deep, anyone('urn:after')]], { ngsild: false });
    t.same(
      set.policies.map((p) => p.uid),
      ['urn:before', 'urn:after'],
    );
    t.same(set.skipped, [{ kind: 'skipped', uid: 'urn:deep', reason: `it is nested deeper than ${MAX_NESTING} levels` }]);
  }
});

t.test('a policy just inside the bound compiles', async (t) => {
  // policy (1) > permission (2) > constraint: the and-chain adds two levels (object, array) a step.
  const set = compilePolicySet([anyone('urn:ok', nestedAnd(29))], { ngsild: false });
  t.same(
    set.policies.map((p) => p.uid),
    ['urn:ok'],
  );
  t.same(set.skipped, []);
});

t.test('nestedDeeperThan counts objects and arrays, the value itself at level 1, without recursion', async (t) => {
  t.equal(nestedDeeperThan(1, 0), false, 'a scalar has no depth');
  t.equal(nestedDeeperThan({}, 1), false);
  t.equal(nestedDeeperThan({ a: [] }, 1), true);
  t.equal(nestedDeeperThan({ a: [] }, 2), false);
  t.equal(nestedDeeperThan(nestedMember(1_000_000)), true);
});

t.test('prefixesOf reads the objects of a @context array and walks no array inside it', async (t) => {
  let ctx: unknown = [{ ex: 'http://example.org/' }];
  for (let i = 0; i < 100_000; i++) ctx = [ctx];
  t.same([...prefixesOf(ctx)], [], 'a nested array holds no context');
  t.same(
    [...prefixesOf([{ ex: 'http://example.org/' }, { odrl: { '@id': 'http://www.w3.org/ns/odrl/2/' } }])],
    [
      ['ex', 'http://example.org/'],
      ['odrl', 'http://www.w3.org/ns/odrl/2/'],
    ],
  );
});
