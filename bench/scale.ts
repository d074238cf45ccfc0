// `--scale` (issue 24 item 3: the cost flat in what a request does not touch): a broker variant with the defaults
// that holds, before any scenario, 1,000,000 entities of a type no row asks for, 10,000 subscriptions on types no row
// writes, and 100 other tenants of 1,000 entities each. Its rows sit beside the default broker's in the same rounds.
import { expectStatus, JSON_HEADERS, NGSI, send } from './ngsi-client.js';
import type { BrokerVariant } from './scenario.js';
import { seedRange } from './scenarios/query.js';

const SMOKE = process.argv.includes('--smoke');
const ENTITIES = SMOKE ? 10_000 : 1_000_000;
const SUBSCRIPTIONS = SMOKE ? 100 : 10_000;
const TENANTS = SMOKE ? 3 : 100;
const PER_TENANT = SMOKE ? 100 : 1000;
const IN_FLIGHT = 16;

async function subscribe(baseUrl: string): Promise<void> {
  let next = 0;
  const one = async (): Promise<void> => {
    for (let i = next++; i < SUBSCRIPTIONS; i = next++) {
      const body = JSON.stringify({
        type: 'Subscription',
        entities: [{ type: `Unrelated${i % 100}` }],
        // Nothing ever matches: a notification would go nowhere (port 9, discard).
        notification: { endpoint: { uri: 'http://127.0.0.1:9/never' } },
      });
      await expectStatus(`subscription ${i}`, send(baseUrl, 'POST', `${NGSI}/subscriptions`, body, JSON_HEADERS), [201]);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, one));
}

async function preload(baseUrl: string, log: (line: string) => void): Promise<void> {
  const t0 = Date.now();
  await seedRange(baseUrl, 'Unrelated', 0, ENTITIES);
  const t1 = Date.now();
  await subscribe(baseUrl);
  const t2 = Date.now();
  for (let t = 0; t < TENANTS; t++)
    await seedRange(baseUrl, 'Unrelated', 0, PER_TENANT, false, { ...JSON_HEADERS, 'NGSILD-Tenant': `benchscale${t}` });
  const s = (a: number, b: number): string => `${((b - a) / 1000).toFixed(0)} s`;
  log(
    `  preloaded ${ENTITIES.toLocaleString('en')} entities (${s(t0, t1)}), ${SUBSCRIPTIONS.toLocaleString('en')} subscriptions (${s(t1, t2)}), ${TENANTS} tenants × ${PER_TENANT} entities (${s(t2, Date.now())})`,
  );
}

export const scaleVariant: BrokerVariant = {
  name: 'uws-pool-scale',
  description: `the defaults, holding ${ENTITIES.toLocaleString('en')} entities of a type no row asks for, ${SUBSCRIPTIONS.toLocaleString('en')} subscriptions on other types and ${TENANTS} other tenants of ${PER_TENANT.toLocaleString('en')} entities`,
  args: [],
  preload,
  preloads: ENTITIES + TENANTS * PER_TENANT,
};
