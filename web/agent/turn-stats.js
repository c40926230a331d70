// One user turn runs a generation per step (a call, its result, the next call ... the answer):
// the turn's figures are those generations added up. The model worker reports each one
// (docs/contracts.md, onStats); the stop reason is the last one's, the one that ended the answer.

/** total + one generation's stats (total null before the turn's first). */
export function addGenerationStats(total, stats) {
  if (!stats) return total;
  const sum = (key) => (total?.[key] || 0) + (stats[key] || 0);
  const generatedTokens = sum("generatedTokens");
  const decodeMs = sum("decodeMs");
  return {
    ...stats,
    generations: (total?.generations || 0) + 1,
    generatedTokens,
    decodeMs,
    prefillMs: sum("prefillMs"),
    tokensPerSecond: decodeMs > 0 ? generatedTokens / (decodeMs / 1000) : stats.tokensPerSecond,
  };
}
