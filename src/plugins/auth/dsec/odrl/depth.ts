// The nesting bound of what dsec walks recursively (policy documents, request bodies read by http:bodyValue):
// JSON.parse takes any depth, the compiler and the comparisons recurse. The plugin imports no broker internals,
// so it has its own iterative check.

/** Levels of objects and arrays (the value itself is level 1): far beyond any policy or request body dsec reads. */
export const MAX_NESTING = 64;

/** Whether `root` holds objects or arrays nested deeper than `max` levels. One pass, an explicit stack. */
export function nestedDeeperThan(root: unknown, max: number = MAX_NESTING): boolean {
  const values: unknown[] = [root];
  const depths: number[] = [1];
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    const children: unknown[] = Array.isArray(v) ? v : Object.values(v);
    for (let i = 0; i < children.length; i++) {
      const c = children[i];
      if (typeof c !== 'object' || c === null) continue;
      values.push(c);
      depths.push(depth + 1);
    }
  }
  return false;
}
