// Build-time feature switches. A default build has them all; `make build FEATURES=noauth,nopolicyApi` (src/build/features.ts)
// rewrites the built copy of this file and removes the code a switched-off feature would load.
export const FEATURES = {
  /** The authorization plugin contract (seed 000 §1: a build-time switch can leave it out). */
  auth: true,
  /** The policy API on its own port (seed 000 §4.1 rule 7: a feature switch, on by default). */
  policyApi: true,
  /** The importer `ldbroker-import` (seed 001 §4.3: a feature switch, on by default; off, it is not built). */
  importer: true,
} as const;
