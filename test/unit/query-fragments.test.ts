// A query page's body (ops/query-fragments.ts encodedPage): the JSON of the rendered array, byte for byte; the same
// page asked again (the same kept entities, so the same rendered forms) is answered with the same bytes, not a new
// buffer; a page with another entity, another order or another form gets its own; and a body a pool thread
// transferred to the front (detached) is made anew.
import t from 'tap';
import { encodedPage, formKeyOf } from '../../src/ops/query-fragments.js';
import { renderOptions } from '../../src/ops/render-options.js';
import { LdRequest } from '../../src/pipeline/ld-request.js';
import { LdOp } from '../../src/ngsild/operations.js';
import { JSON_TYPE, LD_JSON } from '../../src/pipeline/media.js';
import { ContextService } from '../../src/pipeline/contexts/context-service.js';
import { renderEntity } from '../../src/ngsild/entity/render.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';

const DEFAULT = 'https://uri.etsi.org/ngsi-ld/default-context/';
const ROUTE = '/ngsi-ld/v1/entities';
const contexts = new ContextService();
await contexts.init();

function request(query: string, media = JSON_TYPE): LdRequest {
  const req = new LdRequest({
    op: LdOp.QueryEntities,
    route: ROUTE,
    method: 'GET',
    path: ROUTE,
    query,
    params: [],
    headers: {},
    body: null,
  });
  req.context = contexts.defaultContext;
  req.media = media;
  return req;
}

const entity = (k: number): StoredEntity =>
  Object.freeze({ id: `urn:ngsi-ld:T:${k}`, type: [DEFAULT + 'T'], [DEFAULT + 'n']: [{ type: 'Property', value: k }] });

const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

t.test('the same page again: the same bytes, the JSON of the rendered array', async (t) => {
  const req = request('type=T');
  const opts = renderOptions(req);
  const key = formKeyOf(req);
  const page = [entity(1), entity(2), entity(3)];
  const first = encodedPage(req, page, opts, key);
  t.same(JSON.parse(text(first)), JSON.parse(JSON.stringify(page.map((e) => renderEntity(e, req.context, opts)))));
  t.equal(encodedPage(req, [...page], opts, key), first, 'the same buffer for the same forms');
  t.equal(text(encodedPage(req, [], opts, key)), '[]');
});

t.test('another entity, order, length or form: a body of its own', async (t) => {
  const req = request('type=T');
  const opts = renderOptions(req);
  const key = formKeyOf(req);
  const [a, b, c] = [entity(11), entity(12), entity(13)];
  const ab = encodedPage(req, [a, b], opts, key);
  const ac = encodedPage(req, [a, c], opts, key);
  t.not(ac, ab);
  t.match(text(ac), /T:13/);
  t.notMatch(text(ac), /T:12/);
  const abc = encodedPage(req, [a, b, c], opts, key);
  t.equal(JSON.parse(text(abc)).length, 3);
  const ba = encodedPage(req, [b, a], opts, key);
  t.same(
    JSON.parse(text(ba)).map((e: { id: string }) => e.id),
    [b.id, a.id],
  );
  const ld = request('type=T', LD_JSON);
  const withContext = JSON.parse(text(encodedPage(ld, [a, b], renderOptions(ld), formKeyOf(ld))));
  t.ok(
    withContext.every((e: Record<string, unknown>) => e['@context'] !== undefined),
    'application/ld+json: each with its @context',
  );
  t.equal(JSON.parse(text(encodedPage(req, [a, b], opts, key)))[0]['@context'], undefined, 'application/json: none');
});

t.test('a body transferred to another thread (detached) is made anew, the same bytes', async (t) => {
  const req = request('type=T');
  const opts = renderOptions(req);
  const key = formKeyOf(req);
  const page = [entity(21), entity(22)];
  const first = encodedPage(req, page, opts, key);
  const sent = text(first);
  structuredClone(first.buffer, { transfer: [first.buffer as ArrayBuffer] });
  t.equal(first.byteLength, 0, 'detached');
  const again = encodedPage(req, page, opts, key);
  t.not(again, first);
  t.equal(text(again), sent);
});
