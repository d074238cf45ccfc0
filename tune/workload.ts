// The tuning workload file (seed 001 §2.8): read, checked member by member and completed with every default, so the
// tuner never meets a missing or ill-typed member. A bad member is a WorkloadError naming its JSON path.
import { readFileSync } from 'node:fs';

export const ATTRIBUTE_TYPES = [
  'Property',
  'GeoProperty',
  'Relationship',
  'LanguageProperty',
  'VocabProperty',
  'ListProperty',
  'JsonProperty',
] as const;
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];
export const MIX_KINDS = ['patch', 'query', 'retrieve', 'create'] as const;
export type MixKind = (typeof MIX_KINDS)[number];

export interface WorkloadAttribute {
  name: string;
  type: AttributeType;
  /** Absent: the tuner makes one per entity (a number, a Point, a link to another seeded entity, ...). */
  value?: unknown;
  observedAt: boolean;
  subAttributes: number;
}

export interface WorkloadType {
  type: string;
  /** Normalised: the shares of all types add to 1. */
  share: number;
  attributes: WorkloadAttribute[];
}

export interface WorkloadSubscriptions {
  count: number;
  select: 'perEntity' | 'byType';
  type: string;
  watchedAttributes?: string[];
  q?: string;
}

export interface Workload {
  store: { database: 'embdb' | 'docdb'; persistent: boolean; history: 'none' | 'embdb' | 'tsdb' };
  /** ldbroker's addition to §2.8: the authorization plugin the broker runs with (`dsec`: keys and policies made per run). */
  auth: 'none' | 'dsec';
  entities: { count: number; types: WorkloadType[] };
  subscriptions: WorkloadSubscriptions[];
  load: {
    concurrency: number;
    mix: Record<MixKind, number>;
    patch: { attributes?: string[] };
    query: { type: string; q?: string; limit: number };
  };
  /** Seconds of each measured run (the file gives a string such as `30s`). */
  durationS: number;
}

export class WorkloadError extends Error {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path}: ${problem}`);
  }
}

const DEFAULT_TYPE = 'https://uri.etsi.org/ngsi-ld/default-context/TuneThing';
const DEFAULT_ATTRIBUTE = 'https://uri.etsi.org/ngsi-ld/default-context/value';
/** The broker's largest page (README "Query limits"). */
const MAX_LIMIT = 1000;
/** Enough for any machine this runs on; past it a typo (an extra zero) would seed for hours. */
const MAX_ENTITIES = 10_000_000;

type Json = Record<string, unknown>;

const describe = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : JSON.stringify(v);

function object(v: unknown, path: string): Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new WorkloadError(path, `must be an object (got ${describe(v)})`);
  return v as Json;
}

/** Unknown members are refused: a misspelt one would otherwise silently leave its default in force. */
function only(o: Json, path: string, known: readonly string[]): void {
  for (const k of Object.keys(o))
    if (!known.includes(k)) throw new WorkloadError(path === '' ? k : `${path}.${k}`, `unknown member (known: ${known.join(', ')})`);
}

function str(v: unknown, path: string): string {
  if (typeof v !== 'string' || v === '') throw new WorkloadError(path, `must be a non-empty string (got ${describe(v)})`);
  return v;
}

function oneOf<T extends string>(v: unknown, path: string, values: readonly T[]): T {
  if (typeof v !== 'string' || !values.includes(v as T))
    throw new WorkloadError(path, `must be one of ${values.join(', ')} (got ${describe(v)})`);
  return v as T;
}

function bool(v: unknown, path: string): boolean {
  if (typeof v !== 'boolean') throw new WorkloadError(path, `must be true or false (got ${describe(v)})`);
  return v;
}

function int(v: unknown, path: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new WorkloadError(path, `must be an integer from ${min} to ${max} (got ${describe(v)})`);
  return v;
}

function share(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new WorkloadError(path, `must be a number >= 0 (got ${describe(v)})`);
  return v;
}

function strings(v: unknown, path: string): string[] {
  if (!Array.isArray(v)) throw new WorkloadError(path, `must be an array of strings (got ${describe(v)})`);
  return v.map((s, i) => str(s, `${path}[${i}]`));
}

function array(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) throw new WorkloadError(path, `must be an array (got ${describe(v)})`);
  return v;
}

/** `30s`, `1.5s`, `500ms`, `2m` (seed 001 §2.8 `duration`: a string). */
export function parseDuration(v: unknown, path: string): number {
  const m = typeof v === 'string' ? /^(\d+(?:\.\d+)?)\s*(ms|s|m)$/.exec(v.trim()) : null;
  if (m === null) throw new WorkloadError(path, `must be a duration such as "30s", "500ms" or "2m" (got ${describe(v)})`);
  const n = Number(m[1]) * (m[2] === 'ms' ? 0.001 : m[2] === 'm' ? 60 : 1);
  if (n < 0.1 || n > 3600) throw new WorkloadError(path, `must be from 100ms to 60m (got ${describe(v)})`);
  return n;
}

function attribute(v: unknown, path: string): WorkloadAttribute {
  const o = object(v, path);
  only(o, path, ['name', 'type', 'value', 'observedAt', 'subAttributes']);
  const a: WorkloadAttribute = {
    name: str(o.name, `${path}.name`),
    type: o.type === undefined ? 'Property' : oneOf(o.type, `${path}.type`, ATTRIBUTE_TYPES),
    observedAt: o.observedAt === undefined ? false : bool(o.observedAt, `${path}.observedAt`),
    subAttributes: o.subAttributes === undefined ? 0 : int(o.subAttributes, `${path}.subAttributes`, 0, 100),
  };
  if (o.value !== undefined) {
    if (o.value === null) throw new WorkloadError(`${path}.value`, 'must not be null (leave it out for a value made per entity)');
    if (a.type === 'GeoProperty') point(o.value, `${path}.value`);
    if (a.type === 'Relationship') str(o.value, `${path}.value`);
    a.value = o.value;
  }
  return a;
}

/** §2.8: a GeoProperty of the workload is a Point. */
function point(v: unknown, path: string): void {
  const o = object(v, path);
  const c = o.coordinates;
  const ok =
    o.type === 'Point' &&
    Array.isArray(c) &&
    c.length === 2 &&
    c.every((x) => typeof x === 'number' && Number.isFinite(x)) &&
    Math.abs(c[0] as number) <= 180 &&
    Math.abs(c[1] as number) <= 90;
  if (!ok) throw new WorkloadError(path, 'must be a GeoJSON Point ({"type":"Point","coordinates":[lon,lat]})');
}

function types(v: unknown, path: string): WorkloadType[] {
  const list = array(v, path);
  if (list.length === 0) throw new WorkloadError(path, 'must list at least one type');
  const parsed = list.map((t, i) => {
    const p = `${path}[${i}]`;
    const o = object(t, p);
    only(o, p, ['type', 'share', 'attributes']);
    const attrs = o.attributes === undefined ? [{ name: DEFAULT_ATTRIBUTE }] : array(o.attributes, `${p}.attributes`);
    const attributes = attrs.map((a, j) => attribute(a, `${p}.attributes[${j}]`));
    const seen = new Set<string>();
    attributes.forEach((a, j) => {
      if (seen.has(a.name)) throw new WorkloadError(`${p}.attributes[${j}].name`, `${a.name} is listed twice`);
      seen.add(a.name);
    });
    return { type: str(o.type, `${p}.type`), share: o.share === undefined ? undefined : share(o.share, `${p}.share`), attributes };
  });
  const given = parsed.filter((t) => t.share !== undefined).length;
  if (given !== 0 && given !== parsed.length) {
    const i = parsed.findIndex((t) => t.share === undefined);
    throw new WorkloadError(`${path}[${i}].share`, 'give a share for every type or for none (none: equal shares)');
  }
  const total = parsed.reduce((n, t) => n + (t.share ?? 1), 0);
  if (total <= 0) throw new WorkloadError(`${path}[0].share`, 'the shares add up to 0');
  const names = new Set<string>();
  parsed.forEach((t, i) => {
    if (names.has(t.type)) throw new WorkloadError(`${path}[${i}].type`, `${t.type} is listed twice`);
    names.add(t.type);
  });
  return parsed.map((t) => ({ type: t.type, share: (t.share ?? 1) / total, attributes: t.attributes }));
}

/** How many of `count` entities each type gets: its share, rounded so that the counts add up to `count`. */
export function entitiesPerType(w: Pick<Workload, 'entities'>): number[] {
  const { count, types } = w.entities;
  const exact = types.map((t) => t.share * count);
  const out = exact.map(Math.floor);
  const order = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0]);
  for (let k = 0, left = count - out.reduce((a, b) => a + b, 0); k < left; k++) out[order[k]![1]]!++;
  return out;
}

function subscriptions(v: unknown, path: string, known: WorkloadType[], perType: number[]): WorkloadSubscriptions[] {
  return array(v, path).map((s, i) => {
    const p = `${path}[${i}]`;
    const o = object(s, p);
    only(o, p, ['count', 'select', 'type', 'watchedAttributes', 'q']);
    const out: WorkloadSubscriptions = {
      count: o.count === undefined ? 1 : int(o.count, `${p}.count`, 1, 1_000_000),
      select: o.select === undefined ? 'byType' : oneOf(o.select, `${p}.select`, ['perEntity', 'byType'] as const),
      type: o.type === undefined ? known[0]!.type : str(o.type, `${p}.type`),
    };
    const k = known.findIndex((t) => t.type === out.type);
    if (k < 0) throw new WorkloadError(`${p}.type`, `${out.type} is not one of entities.types`);
    if (out.select === 'perEntity' && out.count > perType[k]!)
      throw new WorkloadError(`${p}.count`, `${out.count} perEntity subscriptions, but ${out.type} has ${perType[k]} entities`);
    if (o.watchedAttributes !== undefined) out.watchedAttributes = strings(o.watchedAttributes, `${p}.watchedAttributes`);
    if (o.q !== undefined) out.q = str(o.q, `${p}.q`);
    return out;
  });
}

function load(v: unknown, known: WorkloadType[]): Workload['load'] {
  const o = object(v, 'load');
  only(o, 'load', ['concurrency', 'mix', 'patch', 'query']);
  let mix: Record<MixKind, number> = { patch: 1, query: 1, retrieve: 1, create: 0 };
  if (o.mix !== undefined) {
    const m = object(o.mix, 'load.mix');
    only(m, 'load.mix', MIX_KINDS);
    mix = { patch: 0, query: 0, retrieve: 0, create: 0 };
    for (const k of MIX_KINDS) if (m[k] !== undefined) mix[k] = share(m[k], `load.mix.${k}`);
    if (MIX_KINDS.every((k) => mix[k] === 0)) throw new WorkloadError('load.mix', 'gives no request a share above 0');
  }
  const patch: Workload['load']['patch'] = {};
  if (o.patch !== undefined) {
    const p = object(o.patch, 'load.patch');
    only(p, 'load.patch', ['attributes']);
    if (p.attributes !== undefined) patch.attributes = strings(p.attributes, 'load.patch.attributes');
  }
  const query: Workload['load']['query'] = { type: known[0]!.type, limit: 20 };
  if (o.query !== undefined) {
    const q = object(o.query, 'load.query');
    only(q, 'load.query', ['type', 'q', 'limit']);
    if (q.type !== undefined) query.type = str(q.type, 'load.query.type');
    if (q.q !== undefined) query.q = str(q.q, 'load.query.q');
    if (q.limit !== undefined) query.limit = int(q.limit, 'load.query.limit', 1, MAX_LIMIT);
  }
  return { concurrency: o.concurrency === undefined ? 50 : int(o.concurrency, 'load.concurrency', 1, 10_000), mix, patch, query };
}

/** The workload with every default filled in (seed 001 §2.8), or a WorkloadError naming the first bad member. */
export function parseWorkload(v: unknown): Workload {
  const root = object(v, '(the file)');
  only(root, '', ['store', 'auth', 'entities', 'subscriptions', 'load', 'duration']);
  const store: Workload['store'] = { database: 'embdb', persistent: false, history: 'none' };
  if (root.store !== undefined) {
    const s = object(root.store, 'store');
    only(s, 'store', ['database', 'persistent', 'history']);
    if (s.database !== undefined) store.database = oneOf(s.database, 'store.database', ['embdb', 'docdb'] as const);
    if (s.persistent !== undefined) store.persistent = bool(s.persistent, 'store.persistent');
    if (s.history !== undefined) store.history = oneOf(s.history, 'store.history', ['none', 'embdb', 'tsdb'] as const);
  }
  if (store.history === 'embdb' && store.database !== 'embdb')
    throw new WorkloadError('store.history', 'embdb history lives in the embedded store: it needs store.database embdb');
  const auth = root.auth === undefined ? 'none' : oneOf(root.auth, 'auth', ['none', 'dsec'] as const);
  const e = root.entities === undefined ? {} : object(root.entities, 'entities');
  only(e, 'entities', ['count', 'types']);
  const entities = {
    count: e.count === undefined ? 1000 : int(e.count, 'entities.count', 1, MAX_ENTITIES),
    types:
      e.types === undefined
        ? [{ type: DEFAULT_TYPE, share: 1, attributes: [attribute({ name: DEFAULT_ATTRIBUTE }, '')] }]
        : types(e.types, 'entities.types'),
  };
  const perType = entitiesPerType({ entities });
  const w: Workload = {
    store,
    auth,
    entities,
    subscriptions: root.subscriptions === undefined ? [] : subscriptions(root.subscriptions, 'subscriptions', entities.types, perType),
    load: load(root.load ?? {}, entities.types),
    durationS: root.duration === undefined ? 30 : parseDuration(root.duration, 'duration'),
  };
  const names = new Set(entities.types.flatMap((t) => t.attributes.map((a) => a.name)));
  w.load.patch.attributes?.forEach((a, i) => {
    if (!names.has(a)) throw new WorkloadError(`load.patch.attributes[${i}]`, `${a} is an attribute of none of entities.types`);
  });
  const mixed = MIX_KINDS.filter((k) => w.load.mix[k] > 0);
  if ((mixed.includes('patch') || mixed.includes('retrieve')) && perType.every((n) => n === 0))
    throw new WorkloadError('entities.count', 'no entity to patch or retrieve');
  return w;
}

/** Reads and checks the file; any problem (unreadable, not JSON, a bad member) is a WorkloadError. */
export function loadWorkload(file: string): Workload {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new WorkloadError('(the file)', `cannot be read: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new WorkloadError('(the file)', `is not JSON: ${(e as Error).message}`);
  }
  return parseWorkload(json);
}
