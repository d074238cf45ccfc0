// Which operations a registration offers (CIM 009 v1.8.1 §4.20, table 4.20-1): the names and groups its
// `operations` member lists, and the default when it lists none.

/** Operations that read (table 4.20-1 "retrieveOps", "federationOps" without the subscriptions). */
const RETRIEVE_OPS = ['retrieveEntity', 'queryEntity'];
const FEDERATION_OPS = [
  ...RETRIEVE_OPS,
  'queryBatch',
  'retrieveTemporal',
  'queryTemporal',
  'retrieveEntityTypes',
  'retrieveEntityTypeDetails',
  'retrieveEntityTypeInfo',
  'retrieveAttrTypes',
  'retrieveAttrTypeDetails',
  'retrieveAttrTypeInfo',
  'createSubscription',
  'updateSubscription',
  'retrieveSubscription',
  'querySubscription',
  'deleteSubscription',
];
const UPDATE_OPS = ['updateEntity', 'updateAttrs', 'replaceEntity', 'replaceAttrs'];
const REDIRECTION_OPS = [
  'createEntity',
  'updateAttrs',
  'appendAttrs',
  'deleteAttrs',
  'deleteEntity',
  'createBatch',
  'upsertBatch',
  'updateBatch',
  'deleteBatch',
  'upsertTemporal',
  'appendAttrsTemporal',
  'deleteAttrsTemporal',
  'updateAttrsTemporal',
  'deleteAttrInstanceTemporal',
  'deleteTemporal',
  'mergeEntity',
  'replaceEntity',
  'replaceAttrs',
  'mergeBatch',
  ...FEDERATION_OPS.filter((o) => !o.endsWith('Subscription')),
];

const GROUPS: Readonly<Record<string, readonly string[]>> = {
  retrieveOps: RETRIEVE_OPS,
  federationOps: FEDERATION_OPS,
  updateOps: UPDATE_OPS,
  redirectionOps: REDIRECTION_OPS,
};

/**
 * A registration without `operations` offers every operation: the ETSI test suite forwards creates and deletes to
 * such a registration (README "Distributed operations" says so).
 */
const EVERY = new Set([...FEDERATION_OPS, ...UPDATE_OPS, ...REDIRECTION_OPS]);

const cache = new WeakMap<readonly string[], ReadonlySet<string>>();

/** The operation names a registration's `operations` list stands for, groups unfolded. */
export function offeredOperations(operations: readonly string[] | undefined): ReadonlySet<string> {
  if (operations === undefined || operations.length === 0) return EVERY;
  let set = cache.get(operations);
  if (set === undefined) {
    const s = new Set<string>();
    for (const op of operations) for (const name of GROUPS[op] ?? [op]) s.add(name);
    set = s;
    cache.set(operations, set);
  }
  return set;
}

export function offers(operations: readonly string[] | undefined, name: string): boolean {
  return offeredOperations(operations).has(name);
}
