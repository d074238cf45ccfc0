// Property-based fuzzing of a real broker (2 pipeline threads): entity operations checked against a model of what
// the accepted ones must leave in the store; hostile bodies, query strings and headers on every route; raw HTTP no
// client library would send. Every answer must come in time, be no 5xx (but 501 for routes not implemented and
// 503 for a @context that cannot be fetched), and every refusal an NGSI-LD ProblemDetails.
//
// Seeded and bounded: FUZZ_SEED picks the seed (a failure prints the seed and path that replay it), FUZZ_RUNS the
// runs of each property (default: a few seconds in `make test`; FUZZ_RUNS=2000 for a long run).
import t, { type Test } from 'tap';
import fc from 'fast-check';
import { connect } from 'node:net';
import { spawnBroker, NGSI, type Broker } from './helpers/broker.js';
import { ENTITY_TYPE, apply, emptyModel, opArb, requestOf, type Model, type Op } from './helpers/fuzz-model.js';
import { headersArb, junkRequestArb, queryPathArb, rawHttpArb, type JunkRequest, type RawRequest } from './helpers/fuzz-inputs.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20_240_613);
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
/** A request not answered by then is a hang. */
const ANSWER_MS = 15_000;
/** Raw HTTP: an answer is complete once the broker is quiet this long after its last byte... */
const QUIET_MS = 150;
/** ...and a request that may rightly be left incomplete is waited for this long before the connection is dropped. */
const SILENT_MS = 300;
const ERR = 'https://uri.etsi.org/ngsi-ld/errors/';

let broker: Broker;
t.before(async () => {
  broker = await spawnBroker(['--connectionPoolSize', '2', '--troe', 'embdb']);
  // The hostile requests' tenant holds entities of each kind of attribute, so queries reach the parsers and
  // judge something instead of answering NonexistentTenant.
  const seeds = [
    {
      id: 'urn:ngsi-ld:J:1',
      type: 'J',
      a: { type: 'Property', value: 1, observedAt: '2020-01-01T00:00:00Z' },
      s: 'text',
      o: { type: 'Property', value: { b: [1, 'x'] } },
      r: { type: 'Relationship', object: 'urn:ngsi-ld:J:2' },
      l: { type: 'LanguageProperty', languageMap: { en: 'one', fr: 'un' } },
      location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [0.5, 0.5] } },
      scope: '/a/b',
    },
    {
      id: 'urn:ngsi-ld:J:2',
      type: ['J', 'K'],
      a: [
        { type: 'Property', value: 2 },
        { type: 'Property', value: 3, datasetId: 'urn:ngsi-ld:Dataset:d' },
      ],
      v: { type: 'VocabProperty', vocab: 'J' },
      j: { type: 'JsonProperty', json: { k: [null] } },
      lr: { type: 'ListRelationship', objectList: [{ object: 'urn:ngsi-ld:J:1' }] },
      location: {
        type: 'GeoProperty',
        value: {
          type: 'Polygon',
          coordinates: [
            [
              [0, 0],
              [1, 0],
              [1, 1],
              [0, 0],
            ],
          ],
        },
      },
    },
  ];
  const r = await send(
    'POST',
    '/entityOperations/create',
    { 'ngsild-tenant': 'fuzzjunk', 'content-type': 'application/json' },
    JSON.stringify(seeds),
  );
  if (r.status !== 201) throw new Error(`seeding fuzzjunk: ${r.status} ${r.text}`);
});
t.teardown(async () => {
  await broker.stop();
});

const params = (numRuns: number): fc.Parameters<unknown> => ({ seed: SEED, numRuns, endOnFailure: false, verbose: 0 });

interface Answer {
  method: string;
  status: number;
  contentType: string;
  text: string;
}

/** Answers by status, for the comment each property leaves: what the inputs reached. */
const tally = new Map<string, number>();
const count = (key: string): void => {
  tally.set(key, (tally.get(key) ?? 0) + 1);
};
function tallied(t: Test, what: string): void {
  t.comment(
    `${what}: ${[...tally]
      .sort((a, b) => (a[0] < b[0] ? -1 : 1))
      .map(([k, n]) => `${k}×${n}`)
      .join(' ')}`,
  );
  tally.clear();
}

async function send(method: string, path: string, headers: Record<string, string>, body?: string | Uint8Array): Promise<Answer> {
  const res = await fetch(broker.url + NGSI + path, { method, headers, body, signal: AbortSignal.timeout(ANSWER_MS) });
  count(String(res.status));
  const text = await res.text();
  if (method === 'HEAD' && res.status >= 500) {
    // RFC 9110 §9.3.2: the answer to HEAD has no body; the same request as GET tells which error it is.
    const get = await fetch(broker.url + NGSI + path, { method: 'GET', headers, signal: AbortSignal.timeout(ANSWER_MS) });
    const getText = await get.text();
    if (get.status === res.status) return { method, status: res.status, contentType: get.headers.get('content-type') ?? '', text: getText };
  }
  return { method, status: res.status, contentType: res.headers.get('content-type') ?? '', text };
}

/** Why an answer breaks the rules, or undefined when it keeps them. */
function brokenRule(a: Answer): string | undefined {
  if (a.status >= 500) {
    const type = problemType(a);
    const allowed =
      (a.status === 501 && type === `${ERR}OperationNotSupported`) || (a.status === 503 && type === `${ERR}LdContextNotAvailable`);
    if (!allowed) return `a ${a.status}: ${a.text.slice(0, 300)}`;
  }
  // RFC 9110 §9.3.2: an answer to HEAD has no body.
  if (a.method === 'HEAD') return undefined;
  if (a.status >= 400) {
    if (!/^application\/(problem\+)?json/.test(a.contentType)) return `a ${a.status} as ${a.contentType}`;
    let p: Record<string, unknown>;
    try {
      p = JSON.parse(a.text) as Record<string, unknown>;
    } catch {
      return `a ${a.status} whose body is no JSON: ${a.text.slice(0, 200)}`;
    }
    if (typeof p.type !== 'string' || typeof p.title !== 'string' || p.status !== a.status || typeof p.detail !== 'string')
      return `a ${a.status} that is no ProblemDetails: ${a.text.slice(0, 300)}`;
    return undefined;
  }
  if (a.text !== '' && /json/.test(a.contentType)) {
    try {
      JSON.parse(a.text);
    } catch {
      return `a ${a.status} ${a.contentType} body that is no JSON: ${a.text.slice(0, 200)}`;
    }
  }
  return undefined;
}

function problemType(a: Answer): unknown {
  try {
    return (JSON.parse(a.text) as { type?: unknown }).type;
  } catch {
    return undefined;
  }
}

function check(a: Answer, what: string): void {
  const broken = brokenRule(a);
  if (broken !== undefined) throw new Error(`${what}: ${broken}`);
}

/** Every entity of the model's tenant as keyValues, by id. */
async function stored(tenant: string): Promise<Record<string, Record<string, unknown>>> {
  const a = await send('GET', `/entities?type=${ENTITY_TYPE}&options=keyValues&limit=1000`, { 'ngsild-tenant': tenant });
  if (a.status === 404 && problemType(a) === `${ERR}NonexistentTenant`) return {};
  if (a.status !== 200) throw new Error(`the final query answered ${a.status}: ${a.text}`);
  const out: Record<string, Record<string, unknown>> = {};
  for (const e of JSON.parse(a.text) as Array<Record<string, unknown>>) {
    const attrs = Object.create(null) as Record<string, unknown>;
    for (const k of Object.keys(e)) if (k !== 'id' && k !== 'type') attrs[k] = e[k];
    out[e.id as string] = attrs;
  }
  return out;
}

function expected(model: Model): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [id, attrs] of model.entities) {
    const o = Object.create(null) as Record<string, unknown>;
    for (const [k, v] of attrs) o[k] = v;
    out[id] = o;
  }
  return out;
}

/** A stable text of a value, members sorted, for comparing the store with the model. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

let tenantCount = 0;

t.test(`entity operations leave the store as the model says (seed ${SEED}, ${RUNS} runs)`, async (t) => {
  const tenantFirst = fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) });
  await fc.assert(
    fc.asyncProperty(tenantFirst, fc.array(opArb, { minLength: 1, maxLength: 25 }), async (withTenant: boolean, ops: Op[]) => {
      // Each run in a tenant of its own: runs (and shrinking) never see each other's entities. Most runs make it
      // first, with an entity of another type; the others start where it does not exist.
      const tenant = `fuzzmodel${++tenantCount}`;
      let model: Model = emptyModel();
      if (withTenant) {
        const seed = await send(
          'POST',
          '/entities',
          { 'ngsild-tenant': tenant, 'content-type': 'application/json' },
          '{"id":"urn:ngsi-ld:Seed:1","type":"Seed"}',
        );
        if (seed.status !== 201) throw new Error(`the tenant's first entity: ${seed.status} ${seed.text}`);
        model = { ...model, tenantExists: true };
      }
      for (const op of ops) {
        const req = requestOf(op);
        const headers: Record<string, string> = { 'ngsild-tenant': tenant };
        if (req.body !== undefined) headers['content-type'] = req.contentType ?? 'application/json';
        const a = await send(req.method, req.path, headers, req.body);
        check(a, `${op.kind} ${req.method} ${req.path}`);
        const { status, next } = apply(model, op);
        if (a.status !== status)
          throw new Error(
            `${op.kind} ${req.method} ${req.path} ${req.body ?? ''}: answered ${a.status}, the model says ${String(status)}: ${a.text.slice(0, 300)}`,
          );
        model = next;
      }
      const got = canonical(await stored(tenant));
      const want = canonical(expected(model));
      if (got !== want) throw new Error(`the store holds ${got}\nthe model says ${want}`);
    }),
    params(RUNS),
  );
  tallied(t, 'answers');
  t.pass('every run matched the model');
});

t.test(`hostile bodies and headers on every route answer in time, no 5xx, refusals as ProblemDetails (seed ${SEED})`, async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(junkRequestArb, { minLength: 1, maxLength: 4 }), async (reqs: JunkRequest[]) => {
      // A few at once, so both pipeline threads take them.
      const answers = await Promise.all(reqs.map((r) => send(r.method, r.path, r.headers, r.body)));
      answers.forEach((a, i) =>
        check(a, `${reqs[i]!.method} ${reqs[i]!.path} ${JSON.stringify(reqs[i]!.headers)} ${describeBody(reqs[i]!.body)}`),
      );
    }),
    params(RUNS * 5),
  );
  tallied(t, 'answers');
  t.pass('every hostile request was answered by the rules');
});

t.test(`query strings in and near the grammars of q, scopeQ, geoQ, idPattern, pick, omit... (seed ${SEED})`, async (t) => {
  await fc.assert(
    fc.asyncProperty(queryPathArb, headersArb, async (path, headers) => {
      const { 'content-type': _ignored, ...rest } = headers;
      check(await send('GET', path, { ...rest, 'ngsild-tenant': 'fuzzjunk' }), `GET ${path} ${JSON.stringify(rest)}`);
    }),
    params(RUNS * 5),
  );
  tallied(t, 'answers');
  t.pass('every query was answered by the rules');
});

t.test(`raw HTTP: a valid answer below 500 or a closed connection, and the broker answers on (seed ${SEED})`, async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(rawHttpArb, { minLength: 1, maxLength: 8 }), async (raws: RawRequest[]) => {
      // Several connections at once: most wait out SILENT_MS, and the broker serves them side by side.
      // A well-formed request must be answered, however loaded the machine: it is waited for as long as any request.
      const exchanges = await Promise.all(raws.map((r) => rawExchange(r.bytes, r.wellFormed ? ANSWER_MS : SILENT_MS)));
      let anySilent = false;
      exchanges.forEach(({ reply, silent }, i) => {
        const { bytes, wellFormed } = raws[i]!;
        const sent = JSON.stringify(bytes.toString('latin1').slice(0, 300));
        const text = reply.toString('latin1');
        count(silent ? 'waiting' : reply.length === 0 ? 'closed' : text.slice(0, 12));
        if (reply.length > 0 && !/^HTTP\/1\.[01] \d{3} /.test(text))
          throw new Error(`answered no HTTP: ${JSON.stringify(text.slice(0, 200))} to ${sent}`);
        for (const m of text.matchAll(/(?:^|\r\n)HTTP\/1\.[01] (\d{3})/g)) {
          if (Number(m[1]) >= 500 && Number(m[1]) !== 501) throw new Error(`answered ${m[1]} to ${sent}`);
        }
        if (wellFormed && reply.length === 0 && silent) throw new Error(`a well-formed request was neither answered nor closed: ${sent}`);
        // Anything else may be left waiting: a request cut short rightly is, and so, until uWS's idle timeout
        // (10 s), is one uWS cannot parse (a defect of the front, for the coordinator: see the report of issue 13
        // item 9). Meanwhile the broker must answer everyone else.
        anySilent ||= silent;
      });
      if (anySilent) check(await send('GET', '/types', {}), 'a request while raw connections wait');
    }),
    params(Math.max(1, Math.ceil(RUNS / 4))),
  );
  tallied(t, 'answers');
  const after = await send('GET', '/types', {});
  t.equal(after.status, 200, 'the broker answers after the raw HTTP');
});

t.test('after all of it, the broker runs and logged no error', async (t) => {
  t.equal(broker.proc.exitCode, null, 'the process is alive');
  const errors = broker.logs.filter((l) => /"level":(50|60)/.test(l));
  t.same(errors, [], 'no error or fatal log line');
});

function describeBody(body: string | Uint8Array | undefined): string {
  if (body === undefined) return '(no body)';
  const text = typeof body === 'string' ? body : `bytes ${Buffer.from(body).toString('hex')}`;
  return text.length > 300 ? `${text.slice(0, 300)}... (${text.length})` : text;
}

/**
 * Writes `bytes` and collects the answer until the broker closes the connection or falls quiet: QUIET_MS after
 * its last byte, or `silentMs` without any (a request left incomplete is rightly waited for).
 */
function rawExchange(bytes: Buffer, silentMs: number): Promise<{ reply: Buffer; silent: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(broker.port, '127.0.0.1');
    let timer = setTimeout(() => done(true), silentMs);
    const done = (silent: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ reply: Buffer.concat(chunks), silent });
    };
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      clearTimeout(timer);
      timer = setTimeout(() => done(false), QUIET_MS);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => done(false));
    socket.write(bytes);
  });
}
