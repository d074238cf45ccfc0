// Issue 16 C: notification delivery with subscription owners (`--auth dsec`: each notified entity decided as a
// retrieve by the owner on the notifier thread, 100 policies with the allowing one last) against the same load on a
// broker without auth, in alternated rounds. Run on its own (`node dist/bench/scenarios/owner-notifications.js
// [--rounds 3] [--duration 5] [--connections 20] [--out file] [--check]`), as scenarios/subscriptions.ts: one matching
// subscription per entity, PATCHes of every entity in turn, a local node:http receiver; each round counts the
// notifications due (PATCHes answered 204) and delivered, and notifications/s. Target: with owners >= 0.8 of without
// (median of the rounds' ratios). `make bench` runs it; it replaces its section of bench/RESULTS.md.
import { createServer } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { benchEntity, benchId } from '../bench-entity.js';
import { runLoad, failedRequests, type LoadRequest } from '../load.js';
import { NGSI, JSON_HEADERS, attributePatches, expectStatus, send } from '../ngsi-client.js';
import { startServer, type ServerProcess } from '../server-process.js';
import { machineAtStart, sectionMarkers, writeResultsSection } from '../results-section.js';
import { median, range } from '../stats.js';
import { pathPolicy, typePolicy } from '../odrl-policy.js';

const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const { begin: BEGIN, end: END } = sectionMarkers('owner-notifications');
const ENTITIES = 1000;
const POLICIES = 100;
const ISSUER = 'did:web:verifier.bench';
const CREATE_CONCURRENCY = 16;

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '20' },
    out: { type: 'string' },
    // the setup and one PATCH a side, its notification awaited: no load run, nothing written
    check: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const durationS = Number(values.duration);
const connections = Number(values.connections);
const ids = Array.from({ length: ENTITIES }, (_, i) => benchId(i + 1));

/** A policy allowing `action` on entities of `type` to the holders of credentials of `issuer` (or anyone). */
const policy = (uid: string, action: string, type: string, issuer?: string): Record<string, unknown> =>
  typePolicy(uid, action, type, issuer ?? 'vc:any');

/** A policy allowing every method of odrl:use on every NGSI-LD path to the holders of credentials of `issuer`. */
const writerPolicy = (issuer: string): Record<string, unknown> => pathPolicy('urn:p:writer', 'odrl:use', '/ngsi-ld/v1', issuer);

interface Side {
  label: string;
  server: ServerProcess;
  /** Authorization of the writer (PATCHes, seeding) and of the subscriber (the owner); empty without auth. */
  writer: Record<string, string>;
  owner: Record<string, string>;
  path: string;
  perSecond: number[];
  due: number[];
  delivered: number[];
}

async function prepare(side: Side, receiverUrl: string): Promise<void> {
  for (let i = 0; i < ids.length; i += 100) {
    const batch = JSON.stringify(ids.slice(i, i + 100).map((id) => benchEntity(id)));
    await expectStatus(
      'seed',
      send(side.server.url, 'POST', `${NGSI}/entityOperations/upsert`, batch, { ...JSON_HEADERS, ...side.writer }),
      [201, 204],
    );
  }
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < ids.length) {
      const id = ids[next++]!;
      const body = {
        type: 'Subscription',
        entities: [{ id, type: 'Bench' }],
        watchedAttributes: ['temperature'],
        notificationTrigger: ['attributeUpdated'],
        notification: { endpoint: { uri: `${receiverUrl}${side.path}` } },
      };
      await expectStatus(
        `subscription of ${id}`,
        send(side.server.url, 'POST', `${NGSI}/subscriptions`, JSON.stringify(body), { ...JSON_HEADERS, ...side.owner }),
        [201],
      );
    }
  };
  await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, worker));
}

async function main(): Promise<void> {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'ldbroker-bench-owners-'));
  const delivered = new Map<string, number>();
  const lastAt = new Map<string, number>();
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '';
      delivered.set(path, (delivered.get(path) ?? 0) + 1);
      lastAt.set(path, Date.now());
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  const sides: Side[] = [];
  try {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' }] }));
    const token = (issuer: string): Promise<string> =>
      new SignJWT({ verifiableCredential: { type: ['VerifiableCredential'], issuer, credentialSubject: {} } })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(ISSUER)
        .setIssuedAt()
        .setExpirationTime('2h')
        .sign(privateKey);
    // The owner's read policy last: deciding a notified entity evaluates every read policy before it.
    // The writer by path: a PATCH of /attrs/temperature names no entity type (its body's `type` is `Property`).
    const policies = [writerPolicy('did:web:writer.bench'), policy('urn:p:subscribe', 'ngsild:create', 'Subscription')];
    for (let i = 0; policies.length < POLICIES - 1; i++) policies.push(policy(`urn:p:other-${i}`, 'odrl:read', `Other${i}`));
    policies.push(policy('urn:p:owner-reads', 'odrl:read', 'Bench', 'did:web:owner.bench'));
    writeFileSync(join(dir, 'policies.json'), JSON.stringify(policies));
    const base = ['--port', '0', '--host', '127.0.0.1', '--logLevel', 'info'];
    const plain = await startServer('no-auth', MAIN, base);
    sides.push({ label: 'no auth', server: plain, writer: {}, owner: {}, path: '/plain', perSecond: [], due: [], delivered: [] });
    const dsec = await startServer('dsec-owners', MAIN, [
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
    const writer = { authorization: `Bearer ${await token('did:web:writer.bench')}` };
    const owner = { authorization: `Bearer ${await token('did:web:owner.bench')}` };
    sides.push({ label: 'dsec, owner filtering', server: dsec, writer, owner, path: '/owned', perSecond: [], due: [], delivered: [] });
    // Keys and policies reach every thread by broadcast: wait until a run of requests is decided.
    for (let i = 0, decided = 0; i < 200 && decided < 20; i++) {
      decided = (await send(dsec.url, 'GET', `${NGSI}/entities/urn:x:none`, undefined, writer)).status === 503 ? 0 : decided + 1;
      if (decided === 0) await new Promise((r) => setTimeout(r, 100));
    }
    for (const side of sides) await prepare(side, receiverUrl);
    if (values.check) {
      for (const side of sides) {
        const [first] = attributePatches(ids);
        const body = first!.body;
        await expectStatus(
          `${side.label}: PATCH`,
          send(side.server.url, 'PATCH', first!.path, body, { ...JSON_HEADERS, ...side.writer }),
          [204],
        );
        const deadline = Date.now() + 10_000;
        while ((delivered.get(side.path) ?? 0) === 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
        if ((delivered.get(side.path) ?? 0) !== 1) throw new Error(`${side.label}: ${delivered.get(side.path) ?? 0} notifications, not 1`);
        process.stderr.write(`check: ${side.label}: PATCH 204, its notification delivered\n`);
      }
      return;
    }

    for (let round = 0; round < rounds; round++) {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        const patches: LoadRequest[] = attributePatches(ids).map((r) => ({ ...r, headers: { ...r.headers, ...side.writer } }));
        const before = delivered.get(side.path) ?? 0;
        const start = Date.now();
        const r = await runLoad(patches, { url: side.server.url, connections, durationS, warmupS: 0 });
        if (failedRequests(r) > 0) throw new Error(`${side.label}: failed requests ${JSON.stringify(r.statusCodes)} errors ${r.errors}`);
        const due = r.statusCodes['204'] ?? 0;
        const deadline = Date.now() + 60_000;
        while ((delivered.get(side.path) ?? 0) - before < due && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
        const got = (delivered.get(side.path) ?? 0) - before;
        const seconds = ((lastAt.get(side.path) ?? Date.now()) - start) / 1000;
        side.due.push(due);
        side.delivered.push(got);
        side.perSecond.push(got / seconds);
        process.stderr.write(`round ${round + 1}: ${side.label}: ${due} due, ${got} delivered, ${(got / seconds).toFixed(0)}/s\n`);
      }
    }
  } finally {
    for (const s of sides) await s.server.stop();
    receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }

  const [plainSide, ownedSide] = sides as [Side, Side];
  const ratios = ownedSide.perSecond.map((v, k) => v / plainSide.perSecond[k]!);
  const lines = [
    `${new Date().toISOString()}, ${machineAtStart()},`,
    `${connections} connections, ${durationS} s per run, ${ENTITIES} entities patched in turn, one matching subscription each, ${POLICIES} policies (the owner's read policy last).`,
    '',
    '| round | no auth: due | delivered | notifications/s | dsec owners: due | delivered | notifications/s | ratio |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...ratios.map(
      (ratio, k) =>
        `| ${k + 1} | ${plainSide.due[k]} | ${plainSide.delivered[k]} | ${plainSide.perSecond[k]!.toFixed(0)} | ${ownedSide.due[k]} | ${ownedSide.delivered[k]} | ${ownedSide.perSecond[k]!.toFixed(0)} | ${ratio.toFixed(2)} |`,
    ),
    '',
    `With owner filtering / without (median of ${rounds} rounds): **${median(ratios).toFixed(2)}** (range ${range(ratios, 2)}); target >= 0.8: ${median(ratios) >= 0.8 ? 'met' : 'MISSED'}.` +
      (sides.every((s) => s.delivered.every((d, k) => d >= s.due[k]!))
        ? ' Every due notification was delivered.'
        : ' NOT ALL DELIVERED in some round.'),
    '',
    `Whole run ${((Date.now() - started) / 60000).toFixed(1)} min.`,
  ];
  const section = [
    BEGIN,
    '## Notifications with subscription owners (issue 16: `node dist/bench/scenarios/owner-notifications.js`)',
    '',
    ...lines,
    END,
  ].join('\n');
  writeResultsSection('owner-notifications', section, values.out);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
