// The pipeline refuses a URL parameter the operation does not take (CIM 009 v1.8.1 §6.3.20), from the operation
// catalog's set, before the handler runs; the handlers no longer check it themselves.
import t from 'tap';
import { runPipeline } from '../../src/pipeline/run.js';
import { OPERATIONS, type LdOp } from '../../src/ngsild/operations.js';
import { handlers } from '../../src/ops/index.js';
import type { OpHandler } from '../../src/pipeline/handler.js';
import type { PipelineTask } from '../../src/pipeline/task.js';
import type { WorkerContext } from '../../src/pipeline/worker-context.js';
import type { ResolvedContext } from '../../src/ngsild/context/resolved.js';

const core = { key: 'core', linkUrl: 'https://example.org/core', contextValue: 'https://example.org/core' } as ResolvedContext;
const ctx = {
  contexts: { defaultContext: core, resolve: async () => core, resolveCachedUrl: () => core },
  log: { isLevelEnabled: () => false, error: () => undefined },
  auth: undefined,
  changes: undefined,
  // A store whose reads are always current (Store.freshen is optional); no handler here reads it.
  store: {},
} as unknown as WorkerContext;

function task(op: LdOp, query: string): PipelineTask {
  const route = OPERATIONS[op - 1]!.routes[0]!;
  return {
    op,
    route: route.pattern,
    method: route.method,
    path: route.pattern,
    query,
    params: ['urn:x:1', 'a', 'b'],
    headers: {},
    body: null,
  };
}

/** Every implemented operation with a stub handler that counts its calls. */
function stubs(): { map: Map<LdOp, OpHandler>; calls: Map<LdOp, number> } {
  const calls = new Map<LdOp, number>();
  const map = new Map<LdOp, OpHandler>();
  for (const op of handlers.keys())
    map.set(op, async () => {
      calls.set(op, (calls.get(op) ?? 0) + 1);
      return { status: 204 };
    });
  return { map, calls };
}

t.test('every implemented operation answers 400 InvalidRequest to an unknown URL parameter, before its handler runs', async (t) => {
  const { map, calls } = stubs();
  for (const op of handlers.keys()) {
    // the broker's own operations (no route, never asked by a client) take no URL parameters
    if (OPERATIONS[op - 1]!.routes.length === 0) continue;
    const name = OPERATIONS[op - 1]!.name;
    const result = await runPipeline(ctx, task(op, 'zzz=1'), map);
    t.equal(result.status, 400, `${name}: 400`);
    const problem = JSON.parse(new TextDecoder().decode(result.body!)) as { type: string; detail: string };
    t.equal(problem.type, 'https://uri.etsi.org/ngsi-ld/errors/InvalidRequest', `${name}: InvalidRequest`);
    t.match(problem.detail, /unknown URL parameter 'zzz'/, `${name}: names the parameter`);
    t.notOk(calls.has(op), `${name}: the handler did not run`);
  }
});

t.test("every parameter of an operation's catalog entry reaches its handler", async (t) => {
  const { map, calls } = stubs();
  for (const op of handlers.keys()) {
    if (OPERATIONS[op - 1]!.routes.length === 0) continue;
    const { name, params } = OPERATIONS[op - 1]!;
    const query = [...params].map((p) => `${p}=`).join('&');
    const result = await runPipeline(ctx, task(op, query), map);
    t.equal(result.status, 204, `${name}: accepted (${query})`);
    t.equal(calls.get(op), 1, `${name}: the handler ran`);
  }
});

t.test('an operation without a handler answers 501 whatever its parameters', async (t) => {
  const missing = OPERATIONS.find((o) => !handlers.has(o.op))!;
  const result = await runPipeline(ctx, task(missing.op, 'zzz=1'), new Map());
  t.equal(result.status, 501, `${missing.name}: 501, not 400`);
});
