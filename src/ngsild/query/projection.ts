// Parser of the projection language of `pick` and `omit` (CIM 009 v1.8.1 §4.21): a comma-separated list of entity
// member names, each optionally followed by a braced list that projects the entities its Relationship links to
// (linked entity retrieval, §4.5.23). Bounded in length, names and nesting; any malformed text is 400 BadRequestData.
import { badRequest } from '../problem.js';

/** Longest accepted projection text (characters). */
export const PROJECTION_MAX_LENGTH = 4096;
/** Most names in one projection, nested ones included. */
export const PROJECTION_MAX_NAMES = 256;
/**
 * Deepest nesting of braces: a level projects the entities one join hop away, and a join goes at most MAX_JOIN_LEVEL
 * (ngsild/entity/linked-join.ts, 5) hops, so deeper braces could never apply.
 */
export const PROJECTION_MAX_DEPTH = 5;

export interface Projection {
  /** Every member name of this level, as written (compact terms). */
  readonly names: ReadonlySet<string>;
  /** The names given without braces: what an `omit` leaves out at this level (`rel{...}` only projects inside). */
  readonly plain: ReadonlySet<string>;
  /** `rel{...}`: the projection of the entities the Relationship `rel` links to, by its name. */
  readonly linked: ReadonlyMap<string, Projection>;
}

// §4.21 names an entity member by its term or IRI: letters, digits and the IRI characters that can appear in a
// term or an absolute IRI. `,`, `{`, `}` are the language's own; everything else (`;`, quotes, spaces inside a
// name, brackets...) is refused rather than guessed at.
const NAME_RE = /[\p{L}\p{N}_\-.:/#@~%]+/uy;

interface Mutable {
  names: Set<string>;
  plain: Set<string>;
  linked: Map<string, Mutable>;
}

/** Parses `text` (the value of `param`, named in errors). */
export function parseProjection(text: string, param: string): Projection {
  if (text.length > PROJECTION_MAX_LENGTH) throw badRequest(`${param}: longer than ${PROJECTION_MAX_LENGTH} characters`);
  const p = new ProjectionParser(text, param);
  const root = p.list(0);
  p.skipSpaces();
  if (p.pos < text.length) p.fail(text.charAt(p.pos) === '}' ? "unbalanced '}'" : "expected ',' or the end");
  return root;
}

/** The projection of a JSON array of names (a Query body's or a subscription's `pick` / `omit`). */
export function parseProjectionList(v: unknown, param: string): Projection {
  if (typeof v === 'string') return parseProjection(v, param);
  if (!Array.isArray(v) || v.length === 0 || v.some((x) => typeof x !== 'string' || x === ''))
    throw badRequest(`${param}: must be a non-empty array of entity member names`);
  if (v.length > PROJECTION_MAX_NAMES) throw badRequest(`${param}: more than ${PROJECTION_MAX_NAMES} names`);
  return parseProjection((v as string[]).join(','), param);
}

/**
 * §4.21: a member may not be both picked and omitted (BadRequestData). `rel{...}` in omit does not omit `rel`, so only
 * the plain omitted names are compared at each level, and the braces of a name in both are compared one level down.
 */
export function checkDisjoint(pick: Projection, omit: Projection, where = ''): void {
  for (const name of omit.plain) {
    if (pick.names.has(name)) throw badRequest(`'${where}${name}' is both in pick and in omit`);
  }
  for (const [name, inner] of omit.linked) {
    const picked = pick.linked.get(name);
    if (picked !== undefined) checkDisjoint(picked, inner, `${where}${name}.`);
  }
}

class ProjectionParser {
  pos = 0;
  private count = 0;
  constructor(
    private readonly text: string,
    private readonly param: string,
  ) {}

  fail(what: string): never {
    throw badRequest(`${this.param}: ${what} at position ${this.pos}`);
  }

  skipSpaces(): void {
    while (this.text.charCodeAt(this.pos) === 32) this.pos++;
  }

  /** A list of items up to `}` or the end; `depth` is the number of braces around it. */
  list(depth: number): Mutable {
    const out: Mutable = { names: new Set(), plain: new Set(), linked: new Map() };
    for (;;) {
      this.item(out, depth);
      this.skipSpaces();
      if (this.text.charAt(this.pos) !== ',') return out;
      this.pos++;
    }
  }

  private item(out: Mutable, depth: number): void {
    this.skipSpaces();
    NAME_RE.lastIndex = this.pos;
    const m = NAME_RE.exec(this.text);
    if (m === null) {
      const c = this.text.charAt(this.pos);
      this.fail(c === '' ? 'expected an entity member name' : `expected an entity member name, not '${c}'`);
    }
    if (++this.count > PROJECTION_MAX_NAMES) this.fail(`more than ${PROJECTION_MAX_NAMES} names`);
    const name = m[0];
    this.pos += name.length;
    out.names.add(name);
    this.skipSpaces();
    if (this.text.charAt(this.pos) !== '{') {
      out.plain.add(name);
      return;
    }
    if (depth >= PROJECTION_MAX_DEPTH) this.fail(`braces nested deeper than ${PROJECTION_MAX_DEPTH}`);
    this.pos++;
    const inner = this.list(depth + 1);
    this.skipSpaces();
    if (this.text.charAt(this.pos) !== '}') this.fail("expected ',' or '}'");
    this.pos++;
    const had = out.linked.get(name);
    out.linked.set(name, had === undefined ? inner : merged(had, inner));
  }
}

/** `rel{a},rel{b}` projects the linked entities on both lists. */
function merged(a: Mutable, b: Mutable): Mutable {
  const linked = new Map(a.linked);
  for (const [name, p] of b.linked) {
    const had = linked.get(name);
    linked.set(name, had === undefined ? p : merged(had, p));
  }
  return { names: new Set([...a.names, ...b.names]), plain: new Set([...a.plain, ...b.plain]), linked };
}
