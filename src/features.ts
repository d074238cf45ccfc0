// Build-time feature switches. A default build has them all; `make build FEATURES=noauth` (src/build/features.ts)
// rewrites the built copy of this file and removes the code a switched-off feature would load.
export const FEATURES = {
  /** The authorization plugin contract (seed 000 §1: a build-time switch can leave it out). */
  auth: true,
} as const;
