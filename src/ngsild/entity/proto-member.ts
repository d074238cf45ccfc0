// The one member name the broker cannot keep: `__proto__`. msgpackr renames it `__proto_` when it reads a record
// back (its guard against prototype pollution), and jsonld drops a term of that name, so it is refused at the input.
import { badRequest } from '../problem.js';

/** The name that no stored value may hold as a member (README "Limits"). */
export const PROTO = '__proto__';

/**
 * The path, below `v`, of its first member named `__proto__` (`.a[2].__proto__`), or undefined. A request body is
 * nested at most 66 levels (depth.ts) before any of it is read, so the recursion is bounded.
 */
export function protoMemberPath(v: unknown): string | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const below = protoMemberPath(v[i]);
      if (below !== undefined) return `[${i}]${below}`;
    }
    return undefined;
  }
  for (const key in v) {
    if (key === PROTO) return '.' + PROTO;
    const below = protoMemberPath((v as Record<string, unknown>)[key]);
    if (below !== undefined) return `.${key}${below}`;
  }
  return undefined;
}

/**
 * `v` unless it holds a member named `__proto__` somewhere: then 400 BadRequestData naming where (below `at`, the
 * member path of `v`; '' for a whole body).
 */
export function checkNoProtoMember<T>(v: T, at: string): T {
  if (typeof v !== 'object' || v === null) return v;
  const path = protoMemberPath(v);
  if (path !== undefined) {
    const where = at === '' && path.charCodeAt(0) === 46 /* . */ ? path.slice(1) : at + path;
    throw badRequest(
      `${where.length > 120 ? '...' + where.slice(-117) : where}: a member named "__proto__" cannot be stored (JavaScript reserves the name); rename it`,
    );
  }
  return v;
}
