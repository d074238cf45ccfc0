// What a notification may carry (seed 000 §5.3, §3 owner rows): each entity is asked about as a retrieve by the
// subscription's owner, restored from the store's `subscriptionOwners` record and kept 30 s (seed 000 §8), so an
// owner another broker of the store wrote is seen within that time; a change of the subscription on this broker
// forgets it at once. No owner (none kept, lost, expired, or the plugin cannot tell) leaves out every entity.
import { AuthVerdict, type AuthAnswer, type AuthDriver, type AuthEntity } from '../auth/contract.js';
import { loadAuthModule, registerAuth } from '../auth/loader.js';
import type { Store } from '../store/contract.js';
import type { Logger } from '../logger.js';
import { attrNamesOf, type StoredEntity } from '../ngsild/entity/model.js';
import { SUBSCRIPTION_OWNERS } from '../ngsild/subscription/model.js';
import type { WorkerInit } from '../pipeline/worker-context.js';
import { OwnerRetrieve } from './owner-request.js';

/** seed 000 §3, §8: how long a restored owner is kept before the store is read again. */
export const OWNER_CACHE_MS = 30_000;
const NO_OWNER: Promise<unknown> = Promise.resolve(null);
/** A store or plugin failure while restoring: no owner this time, nothing kept. */
const FAILED = Symbol('failed');

interface KeptOwner {
  /** The restored identity; null: no owner. */
  identity: Promise<unknown>;
  until: number;
}

export class OwnerFilter {
  private readonly owners = new Map<string, KeptOwner>();

  constructor(
    private readonly store: Store,
    private readonly driver: AuthDriver,
    private readonly expandDefault: (term: string) => string,
    private readonly log: Logger,
    private readonly cacheMs = OWNER_CACHE_MS,
  ) {}

  /** The entities of `entities` the owner of the subscription may read, each as far as it may read it. */
  async readable(tenant: string, subscriptionId: string, entities: readonly StoredEntity[]): Promise<StoredEntity[]> {
    const owner = await this.owner(tenant, subscriptionId);
    const kept: StoredEntity[] = [];
    if (owner === null) return kept;
    for (const entity of entities) {
      const allowed = await this.decide(tenant, owner, entity);
      if (allowed !== undefined) kept.push(allowed);
    }
    return kept;
  }

  /** The subscription changed or was deleted here: its owner is read again next time. */
  forget(tenant: string, subscriptionId: string): void {
    this.owners.delete(`${tenant}\n${subscriptionId}`);
  }

  private owner(tenant: string, subscriptionId: string): Promise<unknown> {
    const key = `${tenant}\n${subscriptionId}`;
    const now = Date.now();
    const kept = this.owners.get(key);
    if (kept !== undefined && kept.until > now) return kept.identity;
    const entry: KeptOwner = { identity: NO_OWNER, until: now + this.cacheMs };
    entry.identity = this.restore(tenant, subscriptionId).then((identity) => {
      if (identity !== FAILED) return identity;
      // No owner for this notification (fail closed), and not kept: the next one reads the store again.
      if (this.owners.get(key) === entry) this.owners.delete(key);
      return null;
    });
    this.owners.set(key, entry);
    return entry.identity;
  }

  private async restore(tenant: string, subscriptionId: string): Promise<unknown> {
    try {
      const doc = await this.store.collection(tenant, SUBSCRIPTION_OWNERS).get(subscriptionId);
      const text = doc?.['owner'];
      if (typeof text !== 'string') return null;
      return this.driver.identityRestore!(text) ?? null;
    } catch (e) {
      this.log.error(
        { err: e, subscription: subscriptionId },
        'the subscription owner cannot be restored; its notification carries nothing',
      );
      return FAILED;
    }
  }

  /** The entity as the owner may read it; undefined when it may not. A plugin that throws allows nothing. */
  private async decide(tenant: string, owner: unknown, entity: StoredEntity): Promise<StoredEntity | undefined> {
    const driver = this.driver;
    const req = new OwnerRetrieve(tenant, entity.id, this.expandDefault);
    try {
      if (driver.authorize !== undefined && (await driver.authorize(req, owner, {})) !== AuthVerdict.Allow) return undefined;
      if (driver.entity === undefined) return entity;
      const asked: AuthEntity = { id: entity.id, types: entity.type, storedTypes: true, read: true };
      const answer: AuthAnswer = {};
      if ((await driver.entity(req, owner, asked, answer)) !== AuthVerdict.Allow) return undefined;
      if (answer.partial !== true || driver.abiVersion < 4) return entity;
      // seed 000 §2.3 partial: each attribute asked alone; those not allowed are left out, id, type and the rest stay
      const partial: StoredEntity = { ...entity };
      for (const name of attrNamesOf(entity)) {
        if ((await driver.entity(req, owner, { ...asked, attribute: name }, {})) !== AuthVerdict.Allow) delete partial[name];
      }
      return partial;
    } catch (e) {
      this.log.error({ err: e, entity: entity.id }, 'the auth plugin failed deciding a notification entity; it is left out');
      return undefined;
    } finally {
      try {
        driver.release?.(req, owner);
      } catch {
        // release answers nothing; a plugin failing there changes no decision
      }
    }
  }
}

/**
 * The notifier's instance of the auth plugin (not primary: it receives keys and policies as the pipeline's do) and
 * its owner filter; undefined when the plugin keeps no owners (ABI 1, or no identitySave/identityRestore).
 */
export async function loadOwnerFilter(
  init: WorkerInit,
  store: Store,
  expandDefault: (term: string) => string,
  log: Logger,
): Promise<{ filter: OwnerFilter; shutdown: () => Promise<void> } | undefined> {
  const mod = await loadAuthModule(init.config.auth!, init.config.pluginDir);
  const driver = await registerAuth(mod, { options: (init.authOptions ?? {}) as never, primary: false, log, expandDefault });
  const shutdown = async (): Promise<void> => {
    await (mod as { authShutdown?: () => Promise<void> | void }).authShutdown?.();
  };
  if (driver.identitySave === undefined || driver.identityRestore === undefined) {
    await shutdown();
    return undefined;
  }
  return { filter: new OwnerFilter(store, driver, expandDefault, log), shutdown };
}
