// Route lookup: method + path → LdOp and decoded path parameters, or the reason there is none (404, 405 + Allow, a
// parameter segment left empty), or the methods of the path for OPTIONS. HEAD finds the GET operation (RFC 9110
// §9.3.2). The routes are the operation catalog's (src/ngsild/operations.ts).
import { API_PREFIX, OPERATIONS, type LdOp, type Method } from '../ngsild/operations.js';

export type RouteMatch =
  | { kind: 'op'; op: LdOp; route: string; params: string[] }
  | { kind: 'notFound' }
  | { kind: 'badMethod'; allow: string }
  /** The route's method matched but a parameter segment is empty (`/entities//attrs`): `name` says which. */
  | { kind: 'emptyParam'; name: string }
  | { kind: 'options'; allow: string };

/** One path and the operation of each method it serves, in catalog order. */
interface RouteDef {
  pattern: string;
  methods: Partial<Record<Method, LdOp>>;
}

interface CompiledRoute {
  def: RouteDef;
  route: string;
  /** Literal segments, or null where a parameter stands. */
  segments: (string | null)[];
  /** The name of each parameter (`entityId` for `:entityId`), in path order. */
  paramNames: string[];
  allow: string;
}

/** The paths of the catalog, below the prefix or at the root, each with its methods. */
function routeDefs(root: boolean): RouteDef[] {
  const byPattern = new Map<string, RouteDef>();
  for (const operation of OPERATIONS) {
    for (const r of operation.routes) {
      if ((r.root === true) !== root) continue;
      let def = byPattern.get(r.pattern);
      if (def === undefined) {
        def = { pattern: r.pattern, methods: {} };
        byPattern.set(r.pattern, def);
      }
      def.methods[r.method] = operation.op;
    }
  }
  return [...byPattern.values()];
}

/** RFC 9110 §10.2.1: every method the path serves; HEAD wherever GET is (§9.3.2), OPTIONS everywhere (§9.3.7). */
function allowOf(def: RouteDef): string {
  const methods: string[] = [];
  for (const m of Object.keys(def.methods)) {
    methods.push(m);
    if (m === 'GET') methods.push('HEAD');
  }
  methods.push('OPTIONS');
  return methods.join(', ');
}

/**
 * Routes grouped by first segment then by segment count (an array index), so a lookup compares only a handful and
 * builds no key string.
 */
type RouteTable = Map<string, Array<CompiledRoute[] | undefined>>;

function compileTable(defs: readonly RouteDef[], prefix: string): RouteTable {
  const table: RouteTable = new Map();
  for (const def of defs) {
    const parts = def.pattern.slice(1).split('/');
    const segments = parts.map((s) => (s.startsWith(':') ? null : s));
    const paramNames = parts.filter((s) => s.startsWith(':')).map((s) => s.slice(1));
    // Every catalog route starts with a literal segment.
    const first = segments[0]!;
    const byCount = table.get(first) ?? [];
    (byCount[segments.length] ??= []).push({ def, route: prefix + def.pattern, segments, paramNames, allow: allowOf(def) });
    table.set(first, byCount);
  }
  return table;
}

const apiTable = compileTable(routeDefs(false), API_PREFIX);
/** Built once: a concatenation in the lookup made (and flattened) a new string per request. */
const API_ROOT = API_PREFIX + '/';
const rootTable = compileTable(routeDefs(true), '');

export function lookupRoute(method: string, path: string): RouteMatch {
  const api = path.startsWith(API_ROOT);
  if (!api && !path.startsWith('/')) return { kind: 'notFound' };
  let rest = path.slice(api ? API_ROOT.length : 1);
  // One trailing slash names the same resource (RFC 9110 §4.2.3 leaves it to the server): `/entities/` is the
  // collection, so `PUT /entities/` is 405 with its Allow, as the ETSI suite expects of DELETE /temporal/entities/,
  // DELETE /entities/{id}/attrs/ and their kin (009_02_01, 013_02_03, 016_02_04, 029_01_01, 032_01_01).
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  return match(api ? apiTable : rootTable, method, rest.split('/'));
}

function match(table: RouteTable, method: string, parts: string[]): RouteMatch {
  const candidates = table.get(parts[0]!)?.[parts.length];
  if (candidates === undefined) return { kind: 'notFound' };
  for (const c of candidates) {
    const params: string[] = [];
    let ok = true;
    for (let i = 0; i < parts.length; i++) {
      const lit = c.segments[i];
      if (lit === null) params.push(parts[i]!);
      else if (lit !== parts[i]) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    if (method === 'OPTIONS') return { kind: 'options', allow: c.allow };
    const op = c.def.methods[(method === 'HEAD' ? 'GET' : method) as Method];
    if (op === undefined) return { kind: 'badMethod', allow: c.allow };
    // CIM 009 §5.6.x: "If the Entity Id is not present ... BadRequestData" (so for the attribute name and the other
    // identifiers of a path): an empty segment is the operation's, with its parameter missing, not an unknown route.
    const empty = params.indexOf('');
    if (empty >= 0) return { kind: 'emptyParam', name: c.paramNames[empty]! };
    for (let i = 0; i < params.length; i++) params[i] = safeDecode(params[i]!);
    return { kind: 'op', op, route: c.route, params };
  }
  return { kind: 'notFound' };
}

function safeDecode(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
