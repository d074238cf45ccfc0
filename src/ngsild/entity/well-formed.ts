// Well-formed Unicode of request bodies: JSON escapes can write lone surrogates ("\ud800"), which are no text at
// all; no UTF-8 encoder (the store's, the attribute index's, a notification's) keeps them as sent.

/** A UTF-16 code unit of a surrogate that is not part of a pair (with the `u` flag a pair is one code point). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The first string (member name or value) of `root` holding a lone surrogate, else undefined. Iterative: `root`
 * may be nested as deep as JSON.parse allows.
 */
export function illFormedString(root: unknown): string | undefined {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return v;
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
    } else if (typeof v === 'object' && v !== null) {
      for (const key in v) {
        if (LONE_SURROGATE.test(key)) return key;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }
  return undefined;
}
