// The cost of authorization (issue 6): retrieve by id with `--auth dsec` and a cached token against the same broker
// without auth, 100 policies where the allowing one is last; each row also as a ratio to bare uWS of the same run.
// Writes its section of bench/RESULTS.md (one run replaces the last). `--smoke`: 3 s, nothing written.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { startServer, type ServerProcess } from './server-process.js';
import { runLoad, failedRequests, type LoadRequest, type LoadResult } from './load.js';
import { benchEntity, benchId } from './bench-entity.js';
import { NGSI, JSON_HEADERS, expectStatus, send } from './ngsi-client.js';
import { typePolicy as odrl } from './odrl-policy.js';
import { durationArg } from './duration-arg.js';
import { writeResultsSection } from './results-section.js';

const BARE_SCRIPT = fileURLToPath(new URL('./bare-server.js', import.meta.url));
const BROKER_SCRIPT = fileURLToPath(new URL('../src/main.js', import.meta.url));
const ISSUER = 'did:web:verifier.bench';
const POLICIES = 100;
const SEEDED = 200;

const smoke = process.argv.includes('--smoke');
const durationS = smoke ? 3 : durationArg(10);
const warmupS = smoke ? 0 : 2;

interface Row {
  name: string;
  result: LoadResult;
}

async function measure(name: string, url: string, headers: Record<string, string>): Promise<Row> {
  const ids = Array.from({ length: SEEDED }, (_, i) => benchId(i + 1));
  const requests: LoadRequest[] = ids.map((id) => ({ method: 'GET', path: `${NGSI}/entities/${id}`, headers }));
  const result = await runLoad(requests, { url, connections: 50, durationS, warmupS });
  process.stdout.write(
    `  ${name.padEnd(22)} ${Math.round(result.requestsPerSecond)} req/s, p99 ${result.p99Ms} ms, ${failedRequests(result)} failed\n`,
  );
  return { name, result };
}

async function seed(url: string, headers: Record<string, string>): Promise<void> {
  for (let i = 1; i <= SEEDED; i++)
    await expectStatus(
      'seed',
      send(url, 'POST', `${NGSI}/entities`, JSON.stringify(benchEntity(benchId(i))), { ...JSON_HEADERS, ...headers }),
      [201, 409],
    );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-bench-auth-'));
  const servers: ServerProcess[] = [];
  try {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' }] }));
    // The create policy first, 98 that never match, the read policy last: a read evaluates all 100.
    const policies = [odrl('urn:p:create', 'ngsild:create', 'Bench')];
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

    const bare = await startServer('bare-uws', BARE_SCRIPT, ['127.0.0.1', '0']);
    servers.push(bare);
    const rows = [await measure('bare-uws', bare.url, {})];
    await bare.stop();
    const base = ['--port', '0', '--host', '127.0.0.1', '--logLevel', 'info'];
    const plain = await startServer('no-auth', BROKER_SCRIPT, base);
    servers.push(plain);
    await seed(plain.url, {});
    rows.push(await measure('retrieve, no auth', plain.url, {}));
    await plain.stop();
    const dsec = await startServer('dsec', BROKER_SCRIPT, [
      ...base,
      '--auth',
      'dsec',
      '--dsecJwks',
      join(dir, 'jwks.json'),
      '--dsecIssuer',
      ISSUER,
      '--dsecPolicies',
      join(dir, 'policies.json'),
    ]);
    servers.push(dsec);
    // Keys and policies reach every pipeline thread by broadcast: wait until a run of requests is decided.
    for (let i = 0, decided = 0; i < 200 && decided < 20; i++) {
      decided = (await send(dsec.url, 'GET', `${NGSI}/entities/urn:x:none`, undefined, auth)).status === 503 ? 0 : decided + 1;
      if (decided === 0) await new Promise((r) => setTimeout(r, 100));
    }
    await seed(dsec.url, auth);
    rows.push(await measure('retrieve, dsec cached', dsec.url, auth));
    await dsec.stop();

    const [bareRow, plainRow, dsecRow] = rows as [Row, Row, Row];
    const ratio = (r: Row): string => (r.result.requestsPerSecond / bareRow.result.requestsPerSecond).toFixed(2);
    const vsPlain = (dsecRow.result.requestsPerSecond / plainRow.result.requestsPerSecond).toFixed(2);
    process.stdout.write(`  dsec / no auth: ${vsPlain} (target >= 0.85)\n`);
    const failed = rows.reduce((n, r) => n + failedRequests(r.result), 0);
    if (!smoke) {
      writeResultsSection(
        'auth',
        [
          '<!-- auth:begin -->',
          '## Authorization: retrieve with `--auth dsec` (100 policies, the allowing one last, token cached)',
          '',
          `Run: \`node dist/bench/auth.js\`, ${durationS} s after ${warmupS} s warm-up, 50 connections.`,
          '',
          '| row | req/s | p99 ms | ratio to bare | failed |',
          '|---|---:|---:|---:|---:|',
          ...rows.map(
            (r) =>
              `| ${r.name} | ${Math.round(r.result.requestsPerSecond)} | ${r.result.p99Ms} | ${ratio(r)} | ${failedRequests(r.result)} |`,
          ),
          '',
          `dsec / no auth: **${vsPlain}** (target >= 0.85). Cache-miss cost per algorithm: \`node dist/bench/micro/dsec-decide.js\`.`,
          '<!-- auth:end -->',
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
