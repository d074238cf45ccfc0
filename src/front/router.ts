// Route lookup: method + path → LdOp and decoded path parameters, or the reason there is none (404, 405 + Allow).
import { API_PREFIX, ROUTES, type LdOp, type Method, type RouteDef } from './routes.js';

export type RouteMatch =
  | { kind: 'op'; op: LdOp; route: string; params: string[] }
  | { kind: 'notFound' }
  | { kind: 'badMethod'; allow: string };

interface CompiledRoute {
  def: RouteDef;
  route: string;
  /** Literal segments, or null where a parameter stands. */
  segments: (string | null)[];
  allow: string;
}

/** Routes grouped by segment count then by first segment, so a lookup compares only a handful. */
const table = new Map<string, CompiledRoute[]>();
for (const def of ROUTES) {
  const segments = def.pattern.slice(1).split('/').map((s) => (s.startsWith(':') ? null : s));
  const key = `${segments.length}/${segments[0]}`;
  const list = table.get(key) ?? [];
  list.push({ def, route: API_PREFIX + def.pattern, segments, allow: Object.keys(def.methods).join(', ') });
  table.set(key, list);
}

export function lookupRoute(method: string, path: string): RouteMatch {
  if (!path.startsWith(API_PREFIX + '/')) return { kind: 'notFound' };
  let rest = path.slice(API_PREFIX.length + 1);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  const parts = rest.split('/');
  const candidates = table.get(`${parts.length}/${parts[0]}`);
  if (candidates === undefined) return { kind: 'notFound' };
  for (const c of candidates) {
    const params: string[] = [];
    let ok = true;
    for (let i = 0; i < parts.length; i++) {
      const lit = c.segments[i];
      if (lit === null) {
        if (parts[i] === '') { ok = false; break; }
        params.push(parts[i]!);
      } else if (lit !== parts[i]) { ok = false; break; }
    }
    if (!ok) continue;
    const op = c.def.methods[method as Method];
    if (op === undefined) return { kind: 'badMethod', allow: c.allow };
    for (let i = 0; i < params.length; i++) params[i] = safeDecode(params[i]!);
    return { kind: 'op', op, route: c.route, params };
  }
  return { kind: 'notFound' };
}

function safeDecode(s: string): string {
  if (!s.includes('%')) return s;
  try { return decodeURIComponent(s); } catch { return s; }
}
