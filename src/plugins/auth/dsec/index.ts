// The `dsec` authorization plugin (seed 000 §1, §5): verifies a verifier's access tokens and decides with the
// ODRL policies of a PAP, as the reference data-space chain does. Entry point: options, authRegister, authShutdown.

import { AUTH_ABI_VERSION, AuthVerdict, type AuthAnswer, type AuthDriver, type PluginHost } from '../../../auth/contract.js';
import { DsecInstance } from './instance.js';
import { readConfig } from './options.js';
import { ownerEnded, restoreOwner, saveOwner } from './owner.js';

export { options } from './options.js';

/** The instances registered in this thread (one per authRegister). */
const instances = new Set<DsecInstance>();

/** Fills the driver; throws when the options are refused (the broker then exits with status 1). */
export function authRegister(driver: AuthDriver, host: PluginHost): void {
  const config = readConfig(host.options);
  // seed 000 §9: the broker wrote its version first; no slot newer than the broker's is filled
  const brokerAbi = driver.abiVersion > 0 ? driver.abiVersion : AUTH_ABI_VERSION;
  const instance = new DsecInstance(config, host.log, host.primary, (term) => host.expandDefault(term));
  driver.abiVersion = AUTH_ABI_VERSION;
  driver.name = 'dsec';
  driver.authenticate = (req, out, answer) => instance.authenticate(req, out, answer);
  // seed 000 §3: a subscription owner past its credential's lifetime no longer holds; asked about a notification, its
  // authorize comes first (notify/owner-filter.ts), so the entity hook never sees it
  driver.authorize = (req, identity, answer) =>
    ownerEnded(identity) ? ownerNoLongerHolds(answer) : instance.authorize(req, identity, answer);
  driver.release = () => {};
  if (brokerAbi >= 2) {
    // entity-level decisions are --dsecNgsild (seed 000 §5.8); the default chain decides per request only
    driver.entity = (req, identity, entity, answer) => instance.entity(req, identity, entity, answer);
    // seed 000 §5.8: notifications are decided for the subscription's owner with --dsecNgsild only ("notifications:
    // not decided" in the reference mode, as the chain, which never sees them). The kept owner is the maker's
    // credential (§2.6, §3), restored with the moment it stops holding (--dsecOwnerMaxAge, §5.4).
    if (config.ngsild) {
      driver.identitySave = (identity) => saveOwner(identity, Date.now());
      driver.identityRestore = (text) => restoreOwner(text, config.ownerMaxAgeSeconds, Date.now());
    }
  }
  if (brokerAbi >= 3) driver.authorizeBeforeContext = true;
  instances.add(instance);
  instance.start();
}

function ownerNoLongerHolds(answer: AuthAnswer): AuthVerdict {
  answer.title = 'Forbidden';
  answer.detail = "the subscription owner's credential no longer holds";
  return AuthVerdict.Deny;
}

/** Stops the background reads and closes the channels of every instance of this thread. */
export function authShutdown(): void {
  for (const i of instances) i.stop();
  instances.clear();
}

/** For tests and benchmarks: the instances of this thread, newest last. */
export function dsecInstances(): readonly DsecInstance[] {
  return [...instances];
}
