// One instance of the plugin in one thread: its key and policy sets, the hooks, and its part of the state
// broadcast (the primary reads the sources and posts each new complete set; the others receive it).

import { createHash } from 'node:crypto';
import { BroadcastChannel } from 'node:worker_threads';
import { AuthVerdict, type AuthAnswer, type AuthIdentityOut, type AuthRequest, type PluginLogger } from '../../../auth/contract.js';
import { fingerprintOf, importKeySet, usableKeys, type KeySet } from './key-set.js';
import { DecisionInput } from './odrl/input.js';
import { compilePolicySet, decide, type Decision, type PolicySet } from './odrl/policy-set.js';
import type { DsecConfig } from './options.js';
import { PROBLEMS, denied, invalidToken, unauthenticated, unavailable } from './problems.js';
import { Refresher } from './refresher.js';
import type { KeyDocument } from './sources.js';
import { TokenVerifier, bearerToken, type ClaimRules, type TokenResult } from './token.js';

/** seed 000 §5.5 rule 6, §8: the Authorization size that is logged once. */
export const LARGE_AUTHORIZATION_BYTES = 512;

export const CHANNEL_PREFIX = 'ldbroker:auth:dsec';

type KeyJwks = ReturnType<typeof usableKeys>;

/** What crosses the BroadcastChannel: plain data only. */
type StateMessage = { t: 'hello' } | { t: 'state'; keys: { jwks: KeyJwks; issuer: string | null } | null; policies: string | null };

/** Instances of one configuration share a channel; brokers of other configurations in one process never meet. */
export function channelName(config: DsecConfig): string {
  return `${CHANNEL_PREFIX}:${createHash('sha256').update(JSON.stringify(config)).digest('hex').slice(0, 16)}`;
}

export class DsecInstance {
  private readonly verifier = new TokenVerifier();
  private keyJwks: KeyJwks | null = null;
  private issuer: string | null = null;
  private issuerRead = false;
  private rules: ClaimRules | null = null;
  private policySet: PolicySet | null = null;
  private policiesText: string | null = null;
  private readonly channel: BroadcastChannel;
  private readonly refresher: Refresher | null;
  private readonly input = new DecisionInput();
  private readonly decision: Decision = { verdict: AuthVerdict.Deny, reason: '' };
  private largeHeaderLogged = false;

  constructor(
    private readonly config: DsecConfig,
    private readonly log: PluginLogger,
    readonly primary: boolean,
  ) {
    this.channel = new BroadcastChannel(channelName(config));
    this.channel.unref();
    this.channel.onmessage = (ev) => this.onMessage((ev as { data: unknown }).data as StateMessage);
    this.refresher = primary
      ? new Refresher(config, {
          hasKeys: () => this.verifier.keys !== null,
          hasPolicies: () => this.policySet !== null,
          applyKeys: (doc) => this.applyKeys(doc),
          applyPolicies: (docs) => this.applyPolicies(JSON.stringify(docs)),
          failed: (what, e) => this.log.warn({ err: e.message }, `dsec: reading the ${what} failed; the current set is kept`),
        })
      : null;
  }

  start(): void {
    if (this.refresher !== null) this.refresher.start();
    // a late instance asks for the sets the primary already holds
    else this.channel.postMessage({ t: 'hello' } satisfies StateMessage);
  }

  stop(): void {
    this.refresher?.stop();
    this.channel.close();
  }

  get keys(): KeySet | null {
    return this.verifier.keys;
  }

  get policies(): PolicySet | null {
    return this.policySet;
  }

  get cachedTokens(): number {
    return this.verifier.cachedCount;
  }

  private onMessage(m: StateMessage): void {
    if (this.primary) {
      if (m.t === 'hello') this.broadcast();
      return;
    }
    if (m.t !== 'state') return;
    if (m.keys !== null) void this.useKeys(m.keys.jwks, m.keys.issuer);
    if (m.policies !== null) this.usePolicies(m.policies);
  }

  private broadcast(): void {
    if (this.keyJwks === null && this.policiesText === null) return;
    this.channel.postMessage({
      t: 'state',
      keys: this.keyJwks === null ? null : { jwks: this.keyJwks, issuer: this.issuer },
      policies: this.policiesText,
    } satisfies StateMessage);
  }

  async applyKeys(doc: KeyDocument): Promise<void> {
    if (await this.useKeys(usableKeys(doc.jwks), doc.issuer)) this.broadcast();
  }

  applyPolicies(text: string): void {
    if (this.usePolicies(text)) this.broadcast();
  }

  /** Installs a complete key set; answers whether anything changed. */
  private async useKeys(jwks: KeyJwks, issuer: string | null): Promise<boolean> {
    const issuerChanged = !this.issuerRead || issuer !== this.issuer;
    if (issuerChanged) {
      this.issuerRead = true;
      this.issuer = issuer;
      this.rules = issuer === null ? null : { issuer, audience: this.config.audience, leewaySeconds: this.config.leewaySeconds };
      if (this.primary && issuer === null) this.log.warn({}, 'dsec: the discovery document names no issuer; every token is refused (503)');
    }
    const fingerprint = fingerprintOf(jwks);
    if (this.verifier.keys !== null && this.verifier.keys.fingerprint === fingerprint) return issuerChanged;
    const keySet = await importKeySet(jwks);
    this.keyJwks = jwks;
    this.verifier.setKeys(keySet);
    if (this.primary) this.log.info({ kids: [...keySet.keys.keys()] }, 'dsec: key set loaded');
    return true;
  }

  /** Installs a complete policy set (the source's documents as JSON text); answers whether it changed. */
  private usePolicies(text: string): boolean {
    if (text === this.policiesText) return false;
    const set = compilePolicySet(JSON.parse(text) as unknown[], { organization: this.config.organization, ngsild: this.config.ngsild });
    this.policiesText = text;
    this.policySet = set;
    if (this.primary) {
      for (const s of set.skipped)
        this.log.warn({ uid: s.uid, reason: s.reason }, `dsec: policy '${s.uid ?? '(no uid)'}' skipped, ${s.reason}`);
      this.log.info({ policies: set.policies.length, skipped: set.skipped.length }, 'dsec: policy set loaded');
    }
    return true;
  }

  /** seed 000 §5.1, §5.5: on the front thread, before anything of the request is parsed. */
  authenticate(req: AuthRequest, out: AuthIdentityOut, answer: AuthAnswer): AuthVerdict | Promise<AuthVerdict> {
    out.identity = null;
    // seed 000 §5.5 rule 7: no policies yet, every request is 503
    if (this.policySet === null) return unavailable(answer, PROBLEMS.noPolicies);
    const header = req.header('authorization');
    if (header !== undefined && header.length > LARGE_AUTHORIZATION_BYTES && !this.largeHeaderLogged) {
      this.largeHeaderLogged = true;
      this.log.warn({ bytes: header.length }, `dsec: requests carry Authorization headers over ${LARGE_AUTHORIZATION_BYTES} bytes`);
    }
    const token = bearerToken(header);
    if (token === null) return this.config.anonymous ? AuthVerdict.Allow : unauthenticated(answer);
    if (token === '') return invalidToken(answer, 'the token is empty');
    if (this.verifier.keys === null) return unavailable(answer, PROBLEMS.noKeys);
    const rules = this.rules;
    if (rules === null) return unavailable(answer, PROBLEMS.noIssuer);
    const now = Math.floor(Date.now() / 1000);
    const cached = this.verifier.checkCached(token, rules, now);
    if (cached !== null) return this.authenticated(cached, out, answer);
    return this.verifier.verify(token, rules, now).then((r) => this.authenticated(r, out, answer));
  }

  private authenticated(r: TokenResult, out: AuthIdentityOut, answer: AuthAnswer): AuthVerdict {
    if (r.ok) {
      out.identity = r.credential;
      return AuthVerdict.Allow;
    }
    if (r.unknownKid) this.refresher?.forceKeyRead();
    return invalidToken(answer, r.reason);
  }

  /** seed 000 §5.7: on a pipeline worker, before the request's @context is resolved. */
  authorize(req: AuthRequest, identity: unknown, answer: AuthAnswer): AuthVerdict {
    const set = this.policySet;
    if (set === null) return unavailable(answer, PROBLEMS.noPolicies);
    const x = this.input.reset(req, identity, this.config.strippedPath, Date.now());
    let d: Decision;
    try {
      d = decide(set, x, this.decision);
    } finally {
      x.clear();
    }
    if (d.verdict === AuthVerdict.Allow) return AuthVerdict.Allow;
    if (d.verdict === AuthVerdict.Unavailable) return unavailable(answer, PROBLEMS.roleConflict);
    return denied(answer);
  }
}
