// Summaries of repeated benchmark rounds, as the tables of bench/RESULTS.md print them.

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** `min-max` of the rounds, with `digits` decimals. */
export const range = (xs: readonly number[], digits = 0): string => `${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)}`;
