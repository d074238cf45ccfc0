// The cost of entity-level authorization (issue 16, seed 000 §5.8): a query answering 20 entities with `--auth dsec
// --dsecNgsild` and 100 policies (each entity decided on its stored type; the allowing read policy last) against the
// same query on a broker without auth, in the same run; each row also as a ratio to bare uWS. Target: >= 0.8.
// Writes its section of bench/RESULTS.md. `--smoke`: 3 s, nothing written.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { startServer, type ServerProcess } from './server-process.js';
import { runLoad, failedRequests, type LoadRequest, type LoadResult } from './load.js';
import { benchEntity, benchId } from './bench-entity.js';
import { NGSI, JSON_HEADERS, expectStatus, send } from './ngsi-client.js';
import { machineAtStart, writeResultsSection } from './results-section.js';
import { median, range } from './stats.js';
import { pathPolicy, typePolicy as odrl } from './odrl-policy.js';
import { durationArg } from './duration-arg.js';

const BARE_SCRIPT = fileURLToPath(new URL('./bare-server.js', import.meta.url));
const BROKER_SCRIPT = fileURLToPath(new URL('../src/main.js', import.meta.url));
const ISSUER = 'did:web:verifier.bench';
const POLICIES = 100;
/** The entities a query answers. */
const ANSWERED = 20;
/** Entities of other types beside them, which the query's type selects out (the store's work, not the plugin's). */
const OTHERS = 80;

const smoke = process.argv.includes('--smoke');
const durationS = smoke ? 3 : durationArg(10);
const ROUNDS = smoke ? 1 : 3;
const warmupS = smoke ? 0 : 2;

/** ngsild:create of any entity under the NGSI-LD path (a rule on the request alone). */
const createAnything = pathPolicy('urn:p:create', 'ngsild:create', NGSI);

interface Row {
  name: string;
  result: LoadResult;
}

const QUERY = `${NGSI}/entities?type=Bench&limit=${ANSWERED}`;

async function measure(name: string, url: string, headers: Record<string, string>): Promise<Row> {
  const requests: LoadRequest[] = [{ method: 'GET', path: QUERY, headers }];
  const result = await runLoad(requests, { url, connections: 50, durationS, warmupS });
  process.stdout.write(
    `  ${name.padEnd(30)} ${Math.round(result.requestsPerSecond)} req/s, p99 ${result.p99Ms} ms, ${failedRequests(result)} failed\n`,
  );
  return { name, result };
}

async function seed(url: string, headers: Record<string, string>): Promise<void> {
  const h = { ...JSON_HEADERS, ...headers };
  for (let i = 1; i <= ANSWERED; i++)
    await expectStatus('seed', send(url, 'POST', `${NGSI}/entities`, JSON.stringify(benchEntity(benchId(i))), h), [201, 409]);
  for (let i = 1; i <= OTHERS; i++) {
    const other = { ...benchEntity(`urn:ngsi-ld:Other:${i}`), type: `Other${i % 10}` };
    await expectStatus('seed', send(url, 'POST', `${NGSI}/entities`, JSON.stringify(other), h), [201, 409]);
  }
  const check = await send(url, 'GET', QUERY, undefined, headers);
  const answered = (JSON.parse(check.body) as unknown[]).length;
  if (check.status !== 200 || answered !== ANSWERED) throw new Error(`the query answers ${check.status} with ${answered} entities`);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-bench-ngsild-'));
  const servers: ServerProcess[] = [];
  try {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' }] }));
    // A create policy for any type first (the seeding), 98 read policies of other types, the Bench read policy last:
    // each entity meets 99 candidates of the request's plan and is decided by the last.
    const policies: Record<string, unknown>[] = [createAnything];
    for (let i = 0; i < POLICIES - 2; i++) policies.push(odrl(`urn:p:other-${i}`, 'odrl:read', `Other${i}`));
    policies.push(odrl('urn:p:read', 'odrl:read', 'Bench'));
    writeFileSync(join(dir, 'policies.json'), JSON.stringify(policies));
    const token = await new SignJWT({
      verifiableCredential: { type: ['VerifiableCredential'], issuer: 'did:web:issuer.bench', credentialSubject: {} },
    })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime('2h')
      .sign(privateKey);
    const auth = { authorization: `Bearer ${token}` };

    // The three servers run side by side (an idle one costs nothing) and are measured in alternated rounds, the order
    // reversed every other round, so a machine's drift during the run falls on every row alike.
    const bare = await startServer('bare-uws', BARE_SCRIPT, ['127.0.0.1', '0']);
    servers.push(bare);
    const base = ['--port', '0', '--host', '127.0.0.1', '--logLevel', 'info'];
    const plain = await startServer('no-auth', BROKER_SCRIPT, base);
    servers.push(plain);
    await seed(plain.url, {});
    const dsec = await startServer('dsec-ngsild', BROKER_SCRIPT, [
      ...base,
      '--auth',
      'dsec',
      '--dsecJwks',
      join(dir, 'jwks.json'),
      '--dsecIssuer',
      ISSUER,
      '--dsecPolicies',
      join(dir, 'policies.json'),
      '--dsecNgsild',
    ]);
    servers.push(dsec);
    // Keys and policies reach every pipeline thread by broadcast: wait until a run of requests is decided.
    for (let i = 0, decided = 0; i < 200 && decided < 20; i++) {
      decided = (await send(dsec.url, 'GET', `${NGSI}/entities/urn:x:none`, undefined, auth)).status === 503 ? 0 : decided + 1;
      if (decided === 0) await new Promise((r) => setTimeout(r, 100));
    }
    await seed(dsec.url, auth);

    const sides: [string, string, Record<string, string>][] = [
      ['bare-uws', bare.url, {}],
      ['query of 20, no auth', plain.url, {}],
      ['query of 20, dsec --dsecNgsild', dsec.url, auth],
    ];
    const rounds: Row[][] = [];
    for (let round = 0; round < ROUNDS; round++) {
      process.stdout.write(`round ${round + 1} of ${ROUNDS}\n`);
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      const measured = new Map<string, Row>();
      for (const [name, url, headers] of order) measured.set(name, await measure(name, url, headers));
      rounds.push(sides.map(([name]) => measured.get(name)!));
    }
    for (const server of [bare, plain, dsec]) await server.stop();

    const rps = (round: Row[], i: number): number => round[i]!.result.requestsPerSecond;
    const toBare = (i: number): number[] => rounds.map((r) => rps(r, i) / rps(r, 0));
    const vsPlainAll = rounds.map((r) => rps(r, 2) / rps(r, 1));
    const vsPlain = median(vsPlainAll).toFixed(2);
    process.stdout.write(`  dsec --dsecNgsild / no auth: ${vsPlain} (range ${range(vsPlainAll, 2)}; target >= 0.8)\n`);
    const failed = rounds.flat().reduce((n, r) => n + failedRequests(r.result), 0);
    if (!smoke) {
      writeResultsSection(
        'auth-ngsild',
        [
          '<!-- auth-ngsild:begin -->',
          '## Authorization on the entity: a query of 20 with `--dsecNgsild` (100 policies, the allowing one last)',
          '',
          `Run: \`node dist/bench/auth-ngsild.js\`, ${ROUNDS} alternated rounds of ${durationS} s after ${warmupS} s warm-up, 50 connections; ${machineAtStart()}.`,
          '',
          '| row | req/s (median) | p99 ms (median) | ratio to bare (median) | range | failed |',
          '|---|---:|---:|---:|---:|---:|',
          ...sides.map(
            ([name], i) =>
              `| ${name} | ${Math.round(median(rounds.map((r) => rps(r, i))))} | ${median(rounds.map((r) => r[i]!.result.p99Ms))} | ` +
              `${median(toBare(i)).toFixed(2)} | ${range(toBare(i), 2)} | ${rounds.reduce((n, r) => n + failedRequests(r[i]!.result), 0)} |`,
          ),
          '',
          `dsec --dsecNgsild / no auth, per round: ${vsPlainAll.map((x) => x.toFixed(2)).join(', ')}; median **${vsPlain}** (target >= 0.8).`,
          '<!-- auth-ngsild:end -->',
        ].join('\n'),
      );
    }
    if (failed > 0) process.exitCode = 1;
  } finally {
    for (const s of servers) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
