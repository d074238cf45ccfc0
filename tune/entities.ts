// The entities, subscriptions and requests a workload describes (seed 001 §2.8), as NGSI-LD bodies. Pure: the same
// workload and seed give the same bodies, so every run of the tuner meets the same store and the same request stream.
import { entitiesPerType, type Workload, type WorkloadAttribute, type WorkloadType, type MixKind, MIX_KINDS } from './workload.js';

const SUB_ATTRIBUTE = 'https://uri.etsi.org/ngsi-ld/default-context/sub';

/** The last segment of a type IRI, in the characters an id's third part may hold. */
export const shortType = (type: string): string =>
  type
    .split(/[/#:]/)
    .pop()!
    .replace(/[^A-Za-z0-9_-]/g, '') || 'Entity';

/**
 * `urn:ngsi-ld:<short type>:<type index>-<n>`: the third part names the type, as data spaces write ids (the dsec
 * plugin reads `ngsi-ld:entityType` of a request on one entity from it, PAP 1.7.3).
 */
// Only [A-Za-z0-9_-:] in it: it goes into request paths as it is (the dsec plugin reads the path undecoded).
export const entityId = (type: string, k: number, n: number): string => `urn:ngsi-ld:${shortType(type)}:${k}-${n}`;

/** A small PRNG (mulberry32): reproducible request streams without the cost of crypto. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One attribute of entity `n` of its type (of `count`). §2.8: a number value varies per entity, anything else is
 * copied; an absent value is made per entity for the attribute's type. `v` varies the number on every patch.
 */
export function attributeBody(
  a: WorkloadAttribute,
  type: string,
  typeIndex: number,
  n: number,
  count: number,
  v: number,
  now: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = { type: a.type };
  const given = a.value;
  switch (a.type) {
    case 'Property':
      out.value = typeof given === 'number' ? given + (v % 100) : given === undefined ? v % 100 : given;
      break;
    case 'GeoProperty':
      // Points on a grid of about 1 km around a city centre, one per entity.
      out.value = given ?? {
        type: 'Point',
        coordinates: [+(2.3 + (n % 100) * 0.001).toFixed(4), +(48.8 + Math.floor(n / 100) * 0.001).toFixed(4)],
      };
      break;
    case 'Relationship':
      out.object = given ?? entityId(type, typeIndex, (n + 1) % Math.max(count, 1));
      break;
    case 'LanguageProperty':
      out.languageMap = given ?? { en: `text ${v % 100}` };
      break;
    case 'VocabProperty':
      out.vocab = given ?? 'tuneValue';
      break;
    case 'ListProperty':
      out.valueList = given ?? [v % 100, n];
      break;
    case 'JsonProperty':
      out.json = given ?? { n: v % 100 };
      break;
  }
  if (a.observedAt) out.observedAt = now;
  for (let k = 0; k < a.subAttributes; k++) out[`${SUB_ATTRIBUTE}${k}`] = { type: 'Property', value: k };
  return out;
}

export function entityBody(
  w: Workload,
  typeIndex: number,
  n: number,
  count: number,
  id = entityId(w.entities.types[typeIndex]!.type, typeIndex, n),
): Record<string, unknown> {
  const t = w.entities.types[typeIndex]!;
  const now = new Date().toISOString();
  const e: Record<string, unknown> = { id, type: t.type };
  for (const a of t.attributes) e[a.name] = attributeBody(a, t.type, typeIndex, n, count, n, now);
  return e;
}

/** The attributes a patch of an entity of `t` writes: those of load.patch.attributes it has, else its first Property. */
export function patchedAttributes(w: Workload, t: WorkloadType): WorkloadAttribute[] {
  const listed = w.load.patch.attributes;
  const had = listed === undefined ? [] : t.attributes.filter((a) => listed.includes(a.name));
  if (had.length > 0) return had;
  return [t.attributes.find((a) => a.type === 'Property') ?? t.attributes[0]!];
}

export function subscriptionBodies(w: Workload, endpoint: string): Record<string, unknown>[] {
  const perType = entitiesPerType(w);
  const out: Record<string, unknown>[] = [];
  for (const group of w.subscriptions) {
    const k = w.entities.types.findIndex((t) => t.type === group.type);
    for (let i = 0; i < group.count; i++) {
      const s: Record<string, unknown> = {
        type: 'Subscription',
        entities: [
          group.select === 'perEntity' ? { id: entityId(group.type, k, i % perType[k]!), type: group.type } : { type: group.type },
        ],
        notification: { endpoint: { uri: endpoint, accept: 'application/json' } },
      };
      if (group.watchedAttributes !== undefined) s.watchedAttributes = group.watchedAttributes;
      if (group.q !== undefined) s.q = group.q;
      out.push(s);
    }
  }
  return out;
}

/** `slots` request kinds in proportion to the mix (largest remainder; any kind with a share gets at least one). */
export function mixSlots(mix: Record<MixKind, number>, slots = 20): MixKind[] {
  const total = MIX_KINDS.reduce((n, k) => n + mix[k], 0);
  const kinds = MIX_KINDS.filter((k) => mix[k] > 0);
  const exact = kinds.map((k) => (mix[k] / total) * slots);
  const counts = exact.map((x) => Math.max(1, Math.floor(x)));
  const order = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0]);
  for (let j = 0; counts.reduce((a, b) => a + b, 0) < slots; j++) counts[order[j % order.length]![1]]!++;
  // Interleaved, not in blocks: each connection cycles through the list, so a block would run one kind at a time.
  const out: MixKind[] = [];
  const left = [...counts];
  while (left.some((c) => c > 0))
    kinds.forEach((k, i) => {
      if (left[i]! > 0) {
        out.push(k);
        left[i]!--;
      }
    });
  return out;
}
