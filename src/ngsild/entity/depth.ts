// The nesting bound of request bodies: deeper JSON is refused before anything walks it recursively, so no input
// can overflow a stack. One iterative pass with an explicit stack; stops at the first value that is too deep.

/** CIM 009 leaves the bound to the broker; 64 levels of objects/arrays is far beyond any real entity. */
export const MAX_NESTING = 64;

/** The path (`a.b[2].c`) of the first value nested deeper than `max` levels, or undefined when none is. */
export function tooDeepAt(root: unknown, max: number = MAX_NESTING): string | undefined {
  if (typeof root !== 'object' || root === null) return undefined;
  const values: unknown[] = [root];
  const depths: number[] = [1];
  const paths: string[] = [''];
  while (values.length > 0) {
    const v = values.pop() as object;
    const depth = depths.pop() as number;
    const path = paths.pop() as string;
    if (depth > max) return path === '' ? '(body)' : path;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const c: unknown = v[i];
        if (typeof c === 'object' && c !== null) {
          values.push(c);
          depths.push(depth + 1);
          paths.push(`${path}[${i}]`);
        }
      }
    } else {
      for (const key in v) {
        const c: unknown = (v as Record<string, unknown>)[key];
        if (typeof c === 'object' && c !== null) {
          values.push(c);
          depths.push(depth + 1);
          paths.push(path === '' ? key : `${path}.${key}`);
        }
      }
    }
  }
  return undefined;
}
