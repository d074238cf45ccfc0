// The primary instance's background reads of keys and policies (seed 000 §3, §8): every second while a set is
// missing, every --dsecRefresh seconds after; a forced key read after an unknown kid, at most once a second.
// Timers on the primary's event loop with non-blocking fetches: nothing here ever runs inside a hook.

import type { DsecConfig } from './options.js';
import { readKeys, readPolicies, type KeyDocument } from './sources.js';

/** seed 000 §8: the retry period while a set is missing, and the floor between forced key reads. */
const MISSING_RETRY_MS = 1000;
const FORCED_KEY_FETCH_MIN_MS = 1000;

export interface RefreshTarget {
  hasKeys(): boolean;
  hasPolicies(): boolean;
  /** Applies a complete key read; throws when the document is no key set (the old set is kept). */
  applyKeys(doc: KeyDocument): Promise<void>;
  applyPolicies(documents: unknown[]): void;
  failed(what: 'keys' | 'policies', error: Error): void;
}

export class Refresher {
  private keyTimer: NodeJS.Timeout | null = null;
  private policyTimer: NodeJS.Timeout | null = null;
  private keysInFlight = false;
  private policiesInFlight = false;
  private lastForcedKeyRead = -Infinity;
  private stopped = false;
  private readonly abort = new AbortController();

  constructor(
    private readonly config: DsecConfig,
    private readonly target: RefreshTarget,
  ) {}

  start(): void {
    void this.readKeysNow();
    void this.readPoliciesNow();
  }

  stop(): void {
    this.stopped = true;
    if (this.keyTimer !== null) clearTimeout(this.keyTimer);
    if (this.policyTimer !== null) clearTimeout(this.policyTimer);
    this.abort.abort();
  }

  /** seed 000 §3: a token whose kid the set lacks makes the keys be read at once, at most once a second. */
  forceKeyRead(): void {
    const now = Date.now();
    if (this.stopped || this.keysInFlight || now - this.lastForcedKeyRead < FORCED_KEY_FETCH_MIN_MS) return;
    this.lastForcedKeyRead = now;
    if (this.keyTimer !== null) clearTimeout(this.keyTimer);
    void this.readKeysNow();
  }

  private delay(present: boolean): number {
    return present ? this.config.refreshSeconds * 1000 : MISSING_RETRY_MS;
  }

  private async readKeysNow(): Promise<void> {
    this.keyTimer = null;
    this.keysInFlight = true;
    try {
      await this.target.applyKeys(await readKeys(this.config, this.abort.signal));
    } catch (e) {
      if (!this.stopped) this.target.failed('keys', e as Error);
    } finally {
      this.keysInFlight = false;
    }
    if (this.stopped) return;
    this.keyTimer = setTimeout(() => void this.readKeysNow(), this.delay(this.target.hasKeys()));
    this.keyTimer.unref();
  }

  private async readPoliciesNow(): Promise<void> {
    this.policyTimer = null;
    if (this.policiesInFlight) return;
    this.policiesInFlight = true;
    try {
      this.target.applyPolicies(await readPolicies(this.config, this.abort.signal));
    } catch (e) {
      if (!this.stopped) this.target.failed('policies', e as Error);
    } finally {
      this.policiesInFlight = false;
    }
    if (this.stopped) return;
    this.policyTimer = setTimeout(() => void this.readPoliciesNow(), this.delay(this.target.hasPolicies()));
    this.policyTimer.unref();
  }
}
