// seed 000 §5.4 and §7: the options of `--auth dsec`, and the option sets authRegister refuses (exit 1).

import t from 'tap';
import { AUTH_ABI_VERSION } from '../../src/auth/contract.js';
import { authRegister, authShutdown, options } from '../../src/plugins/auth/dsec/index.js';
import { makeHost, newDriver } from '../fixtures/dsec/harness.js';

t.teardown(authShutdown);

t.test('the options are exactly those of seed 000 §5.4, with their defaults and help', async (t) => {
  t.same(
    options.map((o) => o.name),
    [
      'dsecDiscovery',
      'dsecJwks',
      'dsecIssuer',
      'dsecAudience',
      'dsecLeeway',
      'dsecPap',
      'dsecPolicies',
      'dsecOrganization',
      'dsecRefresh',
      'dsecStrippedPath',
      'dsecAnonymous',
      'dsecNgsild',
      'dsecOwnerMaxAge',
    ],
  );
  const byName = new Map(options.map((o) => [o.name, o]));
  t.equal(byName.get('dsecLeeway')?.default, 120);
  t.equal(byName.get('dsecRefresh')?.default, 30);
  t.equal(byName.get('dsecOwnerMaxAge')?.default, 0);
  for (const b of ['dsecStrippedPath', 'dsecAnonymous', 'dsecNgsild']) t.equal(byName.get(b)?.type, 'bool', `${b} is a flag`);
  for (const o of options) t.ok(o.help.length > 10, `${o.name} has a help text`);
});

const refusals: Array<[string, Record<string, string | boolean>, RegExp]> = [
  ['no key source', { dsecPap: 'http://127.0.0.1:1' }, /key source is required/],
  ['no policy source', { dsecDiscovery: 'http://127.0.0.1:1/d' }, /policy source is required/],
  [
    'both discovery and a JWK Set',
    { dsecDiscovery: 'http://127.0.0.1:1/d', dsecJwks: 'keys.json', dsecIssuer: 'x', dsecPap: 'http://127.0.0.1:1' },
    /not both/,
  ],
  ['--dsecJwks without --dsecIssuer', { dsecJwks: 'keys.json', dsecPap: 'http://127.0.0.1:1' }, /needs --dsecIssuer/],
  [
    'both a PAP and a policy document',
    { dsecDiscovery: 'http://127.0.0.1:1/d', dsecPap: 'http://127.0.0.1:1', dsecPolicies: 'p.json' },
    /not both/,
  ],
  ['a discovery URL that is no URL', { dsecDiscovery: 'verifier/.well-known', dsecPap: 'http://127.0.0.1:1' }, /is not a URL/],
  ['a PAP URL of another scheme', { dsecDiscovery: 'http://127.0.0.1:1/d', dsecPap: 'ftp://127.0.0.1/' }, /not an http or https URL/],
  [
    'a JWK Set URL of another scheme',
    { dsecJwks: 'ftp://127.0.0.1/k', dsecIssuer: 'x', dsecPap: 'http://127.0.0.1:1' },
    /not an http or https URL/,
  ],
  [
    'a refresh period of 0',
    { dsecDiscovery: 'http://127.0.0.1:1/d', dsecPap: 'http://127.0.0.1:1', dsecRefresh: '0' },
    /--dsecRefresh must be an integer of at least 1/,
  ],
];

for (const [what, opts, message] of refusals) {
  t.test(`authRegister refuses ${what} with a clear message`, async (t) => {
    const driver = newDriver();
    t.throws(() => authRegister(driver, makeHost(opts, true)), message);
    t.equal(driver.authenticate, undefined, 'the driver is left unfilled');
  });
}

t.test('an accepted option set fills the driver for ABI 4', async (t) => {
  const driver = newDriver();
  await authRegister(
    driver,
    makeHost(
      { dsecJwks: 'test/fixtures/dsec/absent.json', dsecIssuer: 'x', dsecPolicies: 'test/fixtures/dsec/absent.json', dsecNgsild: true },
      false,
    ),
  );
  t.equal(driver.abiVersion, AUTH_ABI_VERSION);
  t.equal(driver.name, 'dsec');
  t.equal(driver.authorizeBeforeContext, true, 'authorize never calls expand()');
  for (const slot of ['authenticate', 'authorize', 'entity', 'release', 'identitySave', 'identityRestore'] as const) {
    t.type(driver[slot], 'function', `${slot} is filled`);
  }
  const reference = newDriver();
  await authRegister(
    reference,
    makeHost({ dsecJwks: 'test/fixtures/dsec/absent.json', dsecIssuer: 'x', dsecPolicies: 'test/fixtures/dsec/absent.json' }, false),
  );
  t.equal(reference.identitySave, undefined, 'the reference mode keeps no owner (seed 000 §5.8)');
});

t.test('a broker of ABI 1 gets no slot newer than its version', async (t) => {
  const driver = newDriver();
  driver.abiVersion = 1;
  await authRegister(driver, makeHost({ dsecJwks: 'k.json', dsecIssuer: 'x', dsecPolicies: 'p.json' }, false));
  t.equal(driver.entity, undefined);
  t.equal(driver.identitySave, undefined);
  t.equal(driver.authorizeBeforeContext, undefined);
  t.type(driver.authorize, 'function');
});
