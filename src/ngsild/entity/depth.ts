// The nesting bound of request bodies: deeper JSON is refused before anything walks it recursively, so no input
// can overflow a stack. One iterative pass with an explicit stack; stops at the first value that is too deep.

/** CIM 009 leaves the bound to the broker; 64 levels of objects/arrays is far beyond any real entity. */
export const MAX_NESTING = 64;

/**
 * The bound of any request body: a batch holds its entities one level down, and an entity one level deeper than
 * MAX_NESTING in it is that entry's error (CIM 009 §5.6.8), not the whole batch's.
 */
export const MAX_BODY_NESTING = MAX_NESTING + 2;

/**
 * The top-level member holding the first value nested deeper than `max` levels (the body itself is level 1),
 * `(body)` when it is the body's own array items, or undefined when nothing is that deep.
 */
export function tooDeepAt(root: unknown, max: number = MAX_NESTING): string | undefined {
  if (typeof root !== 'object' || root === null) return undefined;
  if (max < 1) return '(body)';
  // Parallel stacks, no per-value allocation: the value, its depth and the top-level member it lies under.
  const values: object[] = [];
  const depths: number[] = [];
  const owners: string[] = [];
  if (Array.isArray(root)) {
    for (const c of root) {
      if (typeof c !== 'object' || c === null) continue;
      values.push(c);
      depths.push(2);
      owners.push('(body)');
    }
  } else {
    for (const key in root) {
      const c: unknown = (root as Record<string, unknown>)[key];
      if (typeof c !== 'object' || c === null) continue;
      values.push(c);
      depths.push(2);
      owners.push(key);
    }
  }
  while (values.length > 0) {
    const v = values.pop()!;
    const depth = depths.pop()!;
    const owner = owners.pop()!;
    if (depth > max) return owner;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const c: unknown = v[i];
        if (typeof c !== 'object' || c === null) continue;
        values.push(c);
        depths.push(depth + 1);
        owners.push(owner);
      }
    } else {
      for (const key in v) {
        const c: unknown = (v as Record<string, unknown>)[key];
        if (typeof c !== 'object' || c === null) continue;
        values.push(c);
        depths.push(depth + 1);
        owners.push(owner);
      }
    }
  }
  return undefined;
}

/**
 * Whether a JSON text can hold a value nested deeper than `max` levels: that takes more than `max` containers, each
 * opened by a `{` or `[` of the text (brackets inside strings count too: this only rules out). Most bodies have
 * fewer: they skip tooDeepAt's walk of the parsed value (issue 24: it was a third of parsing a created entity).
 */
export function mayNestDeeper(text: string, max: number): boolean {
  let open = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c === 0x7b || c === 0x5b) && ++open > max) return true;
  }
  return false;
}
