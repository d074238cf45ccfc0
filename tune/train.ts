// The training step (seed 001 §4.4 trains a compiler profile; node has none to train): a coordinate descent over the
// runtime profile, once per lock preference. Each knob in turn tries its values with the others at their best so
// far; a value is kept only when it beats the best so far by MARGIN without a failed request, so noise leaves the
// broker's defaults in place. One pass: the knobs barely interact (threads, heap sizes, server), and time is short.
import type { Profile, RunResult } from './run-once.js';

/** A change is kept only if it is this much faster: below it, a shared machine's noise decides. */
export const MARGIN = 1.02;

export interface Knob {
  name: string;
  /** The profiles that differ from `p` in this knob only. */
  variants(p: Profile): Profile[];
}

/** The knobs and their candidate values (tune/README.md says why each matters). */
export function knobs(cores: number): Knob[] {
  // Pipeline threads: the default is one per core (RAM store; capped at the cores anyway); 0 runs it inline.
  const threads = [...new Set([0, 1, Math.ceil(cores / 2)])].filter((n) => n < cores);
  return [
    { name: 'connectionPoolSize', variants: (p) => threads.map((n) => ({ ...p, connectionPoolSize: n })) },
    { name: 'maxSemiSpaceMb', variants: (p) => [32, 64].map((n) => ({ ...p, maxSemiSpaceMb: n })) },
    { name: 'maxOldSpaceMb', variants: (p) => [1024, 4096].map((n) => ({ ...p, maxOldSpaceMb: n })) },
    { name: 'httpServer', variants: (p) => [{ ...p, httpServer: p.httpServer === 'uws' ? 'node' : 'uws' }] },
  ];
}

export const DEFAULT_PROFILE: Profile = { httpServer: 'uws' };

/** Trials one training makes: the defaults, then every variant of every knob. */
export const trialCount = (ks: readonly Knob[]): number => 1 + ks.reduce((n, k) => n + k.variants(DEFAULT_PROFILE).length, 0);

export const better = (a: RunResult, b: RunResult): boolean =>
  a.error === undefined && a.failedRequests === 0 && (b.error !== undefined || b.failedRequests > 0 || a.rps > b.rps * MARGIN);

export async function train(ks: readonly Knob[], trial: (p: Profile, label: string) => Promise<RunResult>): Promise<Profile> {
  let best = DEFAULT_PROFILE;
  let bestResult = await trial(best, 'defaults');
  for (const k of ks) {
    for (const p of k.variants(best)) {
      const r = await trial(p, `${k.name}=${String(p[k.name as keyof Profile])}`);
      if (better(r, bestResult)) {
        best = p;
        bestResult = r;
      }
    }
  }
  return best;
}
