// Value semantics of the reference policy engine (Rego) for the ODRL operators: deep equality, the total order
// across JSON types, and collection membership (seed 000 §5.6, "Operators").

/** seed 000 §5.6: null < boolean < number < string < array < object. */
function rank(v: unknown): number {
  if (v === null) return 0;
  switch (typeof v) {
    case 'boolean':
      return 1;
    case 'number':
      return 2;
    case 'string':
      return 3;
    default:
      return Array.isArray(v) ? 4 : 5;
  }
}

/** Strings ordered by code point, as Go compares UTF-8 bytes (UTF-16 units would misorder astral characters). */
function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.codePointAt(i) as number;
    const cb = b.codePointAt(i) as number;
    if (ca !== cb) return ca < cb ? -1 : 1;
    if (ca > 0xffff) i++;
  }
  return a.length - b.length < 0 ? -1 : a.length === b.length ? 0 : 1;
}

export function compareValues(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return 0;
    case 1:
      return a === b ? 0 : a ? 1 : -1;
    case 2:
      return (a as number) === (b as number) ? 0 : (a as number) < (b as number) ? -1 : 1;
    case 3:
      return compareStrings(a as string, b as string);
    case 4: {
      const aa = a as unknown[];
      const ab = b as unknown[];
      const n = Math.min(aa.length, ab.length);
      for (let i = 0; i < n; i++) {
        const c = compareValues(aa[i], ab[i]);
        if (c !== 0) return c;
      }
      return aa.length === ab.length ? 0 : aa.length < ab.length ? -1 : 1;
    }
    default: {
      const oa = a as Record<string, unknown>;
      const ob = b as Record<string, unknown>;
      const ka = Object.keys(oa).sort(compareStrings);
      const kb = Object.keys(ob).sort(compareStrings);
      const n = Math.min(ka.length, kb.length);
      for (let i = 0; i < n; i++) {
        const ck = compareStrings(ka[i] as string, kb[i] as string);
        if (ck !== 0) return ck;
        const cv = compareValues(oa[ka[i] as string], ob[kb[i] as string]);
        if (cv !== 0) return cv;
      }
      return ka.length === kb.length ? 0 : ka.length < kb.length ? -1 : 1;
    }
  }
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const oa = a as Record<string, unknown>;
  const ob = b as Record<string, unknown>;
  const ka = Object.keys(oa);
  if (ka.length !== Object.keys(ob).length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(ob, k) || !deepEqual(oa[k], ob[k])) return false;
  }
  return true;
}

/** Rego's `x in coll`: an element of an array, a value of an object; nothing is in a scalar. */
export function isMember(x: unknown, coll: unknown): boolean {
  if (Array.isArray(coll)) {
    for (const e of coll) if (deepEqual(x, e)) return true;
    return false;
  }
  if (coll !== null && typeof coll === 'object') {
    for (const k in coll as Record<string, unknown>) if (deepEqual(x, (coll as Record<string, unknown>)[k])) return true;
  }
  return false;
}
