// ODRL policies as the data-space chain's PAP holds them (seed 000 §2.9): the one builder the benchmarks, `make tune`
// and the tests give the dsec plugin, so a change of the policy shape is made once. The dsec plugin's compiler
// (src/plugins/auth/dsec/odrl/compile.ts) is what reads them; tests of its corner cases write their odd shapes inline.

const ODRL_CONTEXT = { odrl: 'http://www.w3.org/ns/odrl/2/' };

/** `vc:any` (anyone) as the `@id` the chain writes; any other assignee (a credential issuer, a party collection) as is. */
export type Assignee = string | Record<string, unknown>;
const assigneeOf = (assignee: Assignee): unknown => (assignee === 'vc:any' ? { '@id': 'vc:any' } : assignee);

/** An `odrl:Constraint` comparing `left` with `right` by `operator`. */
export const constraint = (left: string, operator: string, right: unknown): Record<string, unknown> => ({
  '@type': 'odrl:Constraint',
  'odrl:leftOperand': left,
  'odrl:operator': { '@id': operator },
  'odrl:rightOperand': right,
});

/** A policy permitting `action` to `assignee` on the asset collection the constraints (all of them) select. */
export function policy(uid: string, action: string, assignee: Assignee, constraints: Record<string, unknown>[]): Record<string, unknown> {
  return {
    '@context': ODRL_CONTEXT,
    '@type': 'odrl:Policy',
    'odrl:uid': uid,
    'odrl:permission': {
      '@type': 'odrl:Permission',
      'odrl:action': { '@id': action },
      'odrl:assignee': assigneeOf(assignee),
      'odrl:target': {
        '@type': 'odrl:AssetCollection',
        'odrl:source': 'urn:asset',
        'odrl:refinement': constraints.length === 1 ? constraints[0] : { 'odrl:and': constraints },
      },
    },
  };
}

/** `action` on entities of `entityType` (`ngsi-ld:entityType` equal to it) to `assignee`, anyone by default. */
export const typePolicy = (uid: string, action: string, entityType: string, assignee: Assignee = 'vc:any'): Record<string, unknown> =>
  policy(uid, action, assignee, [constraint('ngsi-ld:entityType', 'odrl:eq', entityType)]);

/** `action` on every request whose path lies under `path` (`http:path` `http:isInPath`), anyone by default. */
export const pathPolicy = (uid: string, action: string, path: string, assignee: Assignee = 'vc:any'): Record<string, unknown> =>
  policy(uid, action, assignee, [constraint('http:path', 'http:isInPath', path)]);
