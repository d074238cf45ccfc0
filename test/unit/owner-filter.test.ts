// The notifier's owner filter (seed 000 §5.3, §3, §8): each entity of a notification asked as a retrieve of it by
// the subscription's owner, the owner restored from the store and kept OWNER_CACHE_MS; an unknown owner, a refusal,
// or a plugin that fails leaves the entity out; a partial answer leaves out the attributes refused one by one.
import t from 'tap';
import { AuthVerdict, type AuthDriver, type AuthEntity, type AuthRequest } from '../../src/auth/contract.js';
import { OwnerFilter } from '../../src/notify/owner-filter.js';
import type { Store } from '../../src/store/contract.js';
import type { StoredEntity } from '../../src/ngsild/entity/model.js';
import { LdOp } from '../../src/ngsild/operations.js';

const V = 'https://uri.etsi.org/ngsi-ld/default-context/';
const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} } as never;
const entity = (id: string, attrs: Record<string, unknown> = {}): StoredEntity =>
  ({ id, type: [`${V}T`], createdAt: '', modifiedAt: '', ...attrs }) as StoredEntity;

interface Asked {
  hook: string;
  req: AuthRequest;
  identity: unknown;
  entity?: AuthEntity;
}

/** A store whose owner collection holds `records` (tenant → id → text) and counts its reads. */
function fakeStore(records: Record<string, Record<string, unknown>>): Store & { reads: number } {
  const store = {
    reads: 0,
    collection(tenant: string, name: string) {
      if (name !== 'subscriptionOwners') throw new Error(`unexpected collection ${name}`);
      return {
        get: async (id: string) => {
          store.reads++;
          const text = records[tenant]?.[id];
          if (text instanceof Error) throw text;
          return text === undefined ? undefined : { owner: text };
        },
      };
    },
  };
  return store as unknown as Store & { reads: number };
}

/** A plugin whose owner is the record's text; `deny` ids refused by authorize, `hide` ids by the entity hook. */
function fakeDriver(asked: Asked[], opts: { deny?: string[]; hide?: string[]; partial?: string; throwOn?: string } = {}): AuthDriver {
  return {
    abiVersion: 4,
    name: 'fake',
    authorize: (req, identity) => {
      asked.push({ hook: 'authorize', req, identity });
      const id = req.path.slice(req.path.lastIndexOf('/') + 1);
      if (id === opts.throwOn) throw new Error('plugin failure');
      return opts.deny?.includes(decodeURIComponent(id)) ? AuthVerdict.Deny : AuthVerdict.Allow;
    },
    entity: async (req, identity, e, answer) => {
      asked.push({ hook: 'entity', req, identity, entity: e });
      if (opts.hide?.includes(e.id)) return AuthVerdict.Deny;
      if (opts.partial !== undefined) {
        if (e.attribute === undefined) answer.partial = true;
        else if (e.attribute === opts.partial) return AuthVerdict.Deny;
      }
      return AuthVerdict.Allow;
    },
    identitySave: (i) => String(i),
    identityRestore: (text) => {
      if (text === 'broken') throw new Error('cannot restore');
      return text === 'nobody' ? null : { user: text };
    },
  };
}

const expand = (term: string): string => V + term;

t.test('each entity is asked as a retrieve of it by the owner, in the subscription tenant', async (t) => {
  const asked: Asked[] = [];
  const f = new OwnerFilter(fakeStore({ site2: { 'urn:s:1': 'alice' } }), fakeDriver(asked), expand, log);
  const kept = await f.readable('site2', 'urn:s:1', [entity('urn:ngsi-ld:Building:1'), entity('urn:x:a b')]);
  t.same(
    kept.map((e) => e.id),
    ['urn:ngsi-ld:Building:1', 'urn:x:a b'],
  );
  const req = asked[0]!.req;
  t.equal(req.method, 'GET');
  t.equal(req.path, '/ngsi-ld/v1/entities/urn:ngsi-ld:Building:1', 'the path a client sends: the id as it is');
  t.equal(asked[2]!.req.path, '/ngsi-ld/v1/entities/urn:x:a%20b', 'what a segment cannot hold is percent-encoded');
  t.equal(req.ldOp, LdOp.RetrieveEntity);
  t.equal(req.ldOpName, 'RetrieveEntity');
  t.equal(req.route, '/ngsi-ld/v1/entities/:entityId');
  t.equal(req.tenant, 'site2');
  t.equal(req.header('NGSILD-Tenant'), 'site2');
  t.equal(req.header('authorization'), undefined);
  t.equal(req.body(), null);
  t.equal(req.expand('x'), null, 'a notification has no request @context');
  t.equal(req.expandDefault('x'), `${V}x`);
  t.ok(req.entities);
  t.same(asked[0]!.identity, { user: 'alice' });
  t.same(asked[1]!.entity, { id: 'urn:ngsi-ld:Building:1', types: [`${V}T`], storedTypes: true, read: true });
});

t.test('what authorize or the entity hook refuses, or the plugin fails on, is left out', async (t) => {
  const asked: Asked[] = [];
  const f = new OwnerFilter(
    fakeStore({ '': { s: 'alice' } }),
    fakeDriver(asked, { deny: ['urn:e:1'], hide: ['urn:e:2'], throwOn: 'urn:e:3' }),
    expand,
    log,
  );
  const kept = await f.readable('', 's', [entity('urn:e:1'), entity('urn:e:2'), entity('urn:e:3'), entity('urn:e:4')]);
  t.same(
    kept.map((e) => e.id),
    ['urn:e:4'],
  );
});

t.test('a partial answer leaves out the attributes refused one by one; id, type and the rest stay', async (t) => {
  const asked: Asked[] = [];
  const f = new OwnerFilter(fakeStore({ '': { s: 'alice' } }), fakeDriver(asked, { partial: `${V}secret` }), expand, log);
  const e = entity('urn:e:1', { [`${V}secret`]: [{ type: 'Property', value: 1 }], [`${V}open`]: [{ type: 'Property', value: 2 }] });
  const [kept] = await f.readable('', 's', [e]);
  t.same(Object.keys(kept!).sort(), ['createdAt', 'id', 'modifiedAt', 'type', `${V}open`].sort());
  t.ok(e[`${V}secret`], 'the stored entity itself is not changed');
  t.same(
    asked.filter((a) => a.entity?.attribute !== undefined).map((a) => a.entity!.attribute),
    [`${V}secret`, `${V}open`],
  );
});

t.test('no owner record, one the plugin cannot restore, one it restores as no one, or a store failure: nothing', async (t) => {
  const asked: Asked[] = [];
  const store = fakeStore({ '': { broken: 'broken', nobody: 'nobody', failing: new Error('store down') as never } });
  const f = new OwnerFilter(store, fakeDriver(asked), expand, log);
  for (const id of ['absent', 'broken', 'nobody', 'failing']) t.same(await f.readable('', id, [entity('urn:e:1')]), [], id);
  t.equal(asked.length, 0, 'the plugin is not asked about any entity');
  const reads = store.reads;
  await f.readable('', 'failing', [entity('urn:e:1')]);
  await f.readable('', 'nobody', [entity('urn:e:1')]);
  t.equal(store.reads, reads + 1, 'a failed read is not kept (read again next time); no owner is');
});

t.test('a restored owner is kept for the cache time, then read again; forget reads it at once', async (t) => {
  const asked: Asked[] = [];
  const records = { '': { s: 'alice' } as Record<string, unknown> };
  const store = fakeStore(records);
  const f = new OwnerFilter(store, fakeDriver(asked), expand, log, 200);
  await Promise.all([1, 2, 3].map(() => f.readable('', 's', [entity('urn:e:1')])));
  t.equal(store.reads, 1, 'one store read for notifications close together');
  records['']!['s'] = 'bob';
  await f.readable('', 's', [entity('urn:e:1')]);
  t.same(asked.at(-1)!.identity, { user: 'alice' }, 'within the cache time the kept owner decides');
  await new Promise((r) => setTimeout(r, 250));
  await f.readable('', 's', [entity('urn:e:1')]);
  t.same(asked.at(-1)!.identity, { user: 'bob' }, 'after it, the owner another broker wrote');
  records['']!['s'] = 'carol';
  f.forget('', 's');
  await f.readable('', 's', [entity('urn:e:1')]);
  t.same(asked.at(-1)!.identity, { user: 'carol' }, 'a change of the subscription here is seen at once');
  t.equal(store.reads, 3);
});
