// Purge Entities, distributed (CIM 009 v1.8.1 §5.6.21): the purge is run here and sent, with the same parameters
// (but `local`), to every source whose registration covers its selection and offers deletes (`deleteEntity`;
// auxiliary sources take no writes). Every part succeeded: the local answer; else 207 whose errors name each source
// that failed (503 unreachable, 504 too slow, its own ProblemDetails otherwise).
import { LdError, type ProblemDetails } from '../../ngsild/problem.js';
import { queryTargets, type SourceTarget } from '../../ngsild/registration/match.js';
import { compileTypeExpression, parseTypeExpression } from '../../ngsild/query/type-expression.js';
import { compileIdPattern } from '../../ngsild/query/id-pattern.js';
import type { OpHandler } from '../../pipeline/handler.js';
import { selectionFromParams } from '../selection.js';
import { checkLoop } from './via.js';
import { fanOut, liveRegistrations, localOnly, queryWithout, sourceUrl } from './sources.js';
import { parseJson } from './entities-from-source.js';

const LOCAL_PARAM: ReadonlySet<string> = new Set(['local']);

export function distributedPurge(local: OpHandler): OpHandler {
  return async (req, ctx) => {
    if (localOnly(req)) return local(req, ctx);
    const regs = await liveRegistrations(req, ctx);
    if (regs.length === 0) return local(req, ctx);
    const sel = selectionFromParams(req);
    const expand = req.context.expandTerm.bind(req.context);
    const sels =
      sel.selectors.length === 0
        ? [{}]
        : sel.selectors.map((s) => ({
            types: s.typeText === undefined ? undefined : compileTypeExpression(parseTypeExpression(s.typeText), expand).matches,
            ids: s.ids,
            idPattern: s.idPattern === undefined ? undefined : compileIdPattern(s.idPattern),
          }));
    const byId = new Map<string, SourceTarget>();
    for (const d of sels)
      for (const t of queryTargets(
        regs.filter((r) => r.mode !== 'auxiliary'),
        'deleteEntity',
        d,
      ))
        byId.set(t.body.id, t);
    if (byId.size === 0) return local(req, ctx);
    checkLoop(req, ctx);
    // The local purge first: its 400 (a purge naming nothing) is the request's, before anything is sent.
    const mine = await local(req, ctx);
    const query = queryWithout(req.task.query, LOCAL_PARAM);
    const outcomes = await fanOut(req, ctx, [...byId.values()], (t) => ({ method: 'DELETE', url: sourceUrl(t.body, '/entities', query) }));
    const errors: Array<{ registrationId: string; error: ProblemDetails }> = [];
    for (const o of outcomes) {
      if ('failure' in o) {
        const status = o.failure.reason === 'timeout' ? 504 : 503;
        errors.push({
          registrationId: o.target.body.id,
          error: new LdError('Unavailable', `context source ${o.failure.reason}`, status).toProblem(),
        });
      } else if (o.reply.status >= 300 && o.reply.status !== 508) {
        const p = parseJson(o.reply.body) as Partial<ProblemDetails> | undefined;
        const error: ProblemDetails =
          typeof p === 'object' && p !== null && typeof p.type === 'string'
            ? { type: p.type.slice(0, 200), title: String(p.title ?? 'Context source error').slice(0, 200), status: o.reply.status }
            : { type: 'https://uri.etsi.org/ngsi-ld/errors/InternalError', title: 'Context source error', status: o.reply.status };
        errors.push({ registrationId: o.target.body.id, error });
      }
    }
    if (errors.length === 0) return mine;
    return { status: 207, body: { success: [], errors } };
  };
}
