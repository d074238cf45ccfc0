// Temporal retrieve and query, distributed for inclusive registrations (CIM 009 v1.8.1 §5.7.3.4, §5.7.4.4): the
// local answer and those of the sources whose registrations offer retrieveTemporal / queryTemporal, asked with the
// same parameters, merged as rendered: one temporal entity per id, its types joined, each attribute's instances (or
// simplified values) of every answer together. Exclusive and redirect registrations hold current state here only
// (their sources are not asked about history); a source without a usable answer is left out with an NGSILD-Warning.
import { LdError } from '../../ngsild/problem.js';
import { pathSegment } from '../../ngsild/uri-encode.js';
import { retrieveTargets, queryTargets, type SourceTarget } from '../../ngsild/registration/match.js';
import { compileTypeExpression, parseTypeExpression } from '../../ngsild/query/type-expression.js';
import { compileIdPattern } from '../../ngsild/query/id-pattern.js';
import type { LdRequest } from '../../pipeline/ld-request.js';
import type { WorkerContext } from '../../pipeline/worker-context.js';
import type { OpHandler, OpResult } from '../../pipeline/handler.js';
import { selectionFromParams } from '../selection.js';
import { checkLoop } from './via.js';
import { fanOut, liveRegistrations, localOnly, queryWithout, sourceUrl, sourceWarning } from './sources.js';
import { parseJson } from './entities-from-source.js';

const NOT_FORWARDED: ReadonlySet<string> = new Set(['local', 'limit', 'offset', 'count']);
const CORE = new Set(['id', 'type', '@context', 'scope', 'createdAt', 'modifiedAt', 'deletedAt']);

type Json = Record<string, unknown>;

/** `from`'s attributes put into `into` (rendered temporal entities, compact names): instances or values joined. */
function mergeTemporal(into: Json, from: Json): void {
  const types = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
  const joined = [...new Set([...types(into.type), ...types(from.type)])];
  into.type = joined.length === 1 ? joined[0] : joined;
  for (const [k, v] of Object.entries(from)) {
    if (CORE.has(k)) continue;
    const mine = into[k];
    if (mine === undefined) into[k] = v;
    else into[k] = [...(Array.isArray(mine) ? mine : [mine]), ...(Array.isArray(v) ? v : [v])];
  }
}

function inclusive(ts: SourceTarget[]): SourceTarget[] {
  return ts.filter((t) => t.mode === 'inclusive');
}

async function localOrMissing(local: OpHandler, req: LdRequest, ctx: WorkerContext): Promise<OpResult | undefined> {
  try {
    return await local(req, ctx);
  } catch (e) {
    if (e instanceof LdError && e.kind === 'ResourceNotFound') return undefined;
    throw e;
  }
}

/** GET /temporal/entities/{id}, made distributed. */
export function distributedTemporalRetrieve(local: OpHandler): OpHandler {
  return async (req, ctx) => {
    if (localOnly(req)) return local(req, ctx);
    const regs = await liveRegistrations(req, ctx);
    if (regs.length === 0) return local(req, ctx);
    const id = req.params[0]!;
    const targets = inclusive(retrieveTargets(regs, 'retrieveTemporal', id, undefined, undefined));
    if (targets.length === 0) return local(req, ctx);
    checkLoop(req, ctx);
    const query = queryWithout(req.task.query, NOT_FORWARDED);
    const [mine, outcomes] = await Promise.all([
      localOrMissing(local, req, ctx),
      fanOut(req, ctx, targets, (t) => ({ method: 'GET', url: sourceUrl(t.body, `/temporal/entities/${pathSegment(id)}`, query) })),
    ]);
    const warnings: string[] = [];
    let merged = mine?.body as Json | undefined;
    for (const o of outcomes) {
      if ('failure' in o) warnings.push(sourceWarning(ctx, o.target, o.failure.reason));
      else if (o.reply.status === 404 || o.reply.status === 508) continue;
      else if (o.reply.status !== 200 && o.reply.status !== 206) warnings.push(sourceWarning(ctx, o.target, `answered ${o.reply.status}`));
      else {
        const got = parseJson(o.reply.body);
        if (typeof got !== 'object' || got === null || Array.isArray(got) || (got as Json).id !== id) {
          warnings.push(sourceWarning(ctx, o.target, 'answered no temporal entity it was asked for'));
          continue;
        }
        const { ['@context']: _c, ...body } = got as Json;
        if (merged === undefined) merged = body;
        else mergeTemporal(merged, body);
      }
    }
    if (merged === undefined) throw new LdError('ResourceNotFound', `entity '${id}' has no temporal representation`);
    const headers = [...(mine?.headers ?? [])];
    for (const w of warnings) headers.push('NGSILD-Warning', w);
    return { ...(mine ?? { status: 200, withContext: true }), body: merged, headers };
  };
}

/** GET /temporal/entities, made distributed: merged by id, in the local order then the sources'. */
export function distributedTemporalQuery(local: OpHandler): OpHandler {
  return async (req, ctx) => {
    if (localOnly(req)) return local(req, ctx);
    const regs = await liveRegistrations(req, ctx);
    if (regs.length === 0) return local(req, ctx);
    const sel = selectionFromParams(req);
    const expand = req.context.expandTerm.bind(req.context);
    const attrs = sel.attrs?.map(expand);
    const sels =
      sel.selectors.length === 0
        ? [{ attrs }]
        : sel.selectors.map((s) => ({
            types: s.typeText === undefined ? undefined : compileTypeExpression(parseTypeExpression(s.typeText), expand).matches,
            ids: s.ids,
            idPattern: s.idPattern === undefined ? undefined : compileIdPattern(s.idPattern),
            attrs,
          }));
    const byId = new Map<string, SourceTarget>();
    for (const d of sels) for (const t of inclusive(queryTargets(regs, 'queryTemporal', d))) byId.set(t.body.id, t);
    if (byId.size === 0) return local(req, ctx);
    checkLoop(req, ctx);
    const query = queryWithout(req.task.query, NOT_FORWARDED);
    const [mine, outcomes] = await Promise.all([
      local(req, ctx),
      fanOut(req, ctx, [...byId.values()], (t) => ({ method: 'GET', url: sourceUrl(t.body, '/temporal/entities', query) })),
    ]);
    const warnings: string[] = [];
    const list = Array.isArray(mine.body) ? [...(mine.body as Json[])] : [];
    const index = new Map(list.map((e) => [e.id, e]));
    for (const o of outcomes) {
      if ('failure' in o) {
        warnings.push(sourceWarning(ctx, o.target, o.failure.reason));
        continue;
      }
      if (o.reply.status === 508) continue;
      const got = parseJson(o.reply.body);
      if ((o.reply.status !== 200 && o.reply.status !== 206) || !Array.isArray(got)) {
        warnings.push(sourceWarning(ctx, o.target, o.reply.status === 200 ? 'answered no list' : `answered ${o.reply.status}`));
        continue;
      }
      for (const raw of got) {
        if (typeof raw !== 'object' || raw === null || typeof (raw as Json).id !== 'string') continue;
        const { ['@context']: _c, ...e } = raw as Json;
        const have = index.get(e.id);
        if (have === undefined) {
          list.push(e);
          index.set(e.id, e);
        } else mergeTemporal(have, e);
      }
    }
    const headers = [...(mine.headers ?? [])];
    for (const w of warnings) headers.push('NGSILD-Warning', w);
    return { ...mine, body: list, headers };
  };
}
