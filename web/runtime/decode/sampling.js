// Choosing the next token from a logits vector: greedy, or sampled with
// temperature / top-k / top-p, after a repetition penalty. Pure functions on
// Float32Array, no model or tensor types, so a constrained-decoding processor
// can run before it (see logits-processors.js).

/** A small seeded PRNG (xorshift32 state, mulberry32-style output); uniform in [0, 1). */
export function createRng(seed) {
  let state = (Number.isInteger(seed) ? seed : Math.floor(Math.random() * 2 ** 32)) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function validateSamplingOptions({temperature = 0, topK = 0, topP = 1, repetitionPenalty = 1, seed} = {}) {
  const check = (ok, message) => { if (!ok) throw new RangeError(message); };
  check(Number.isFinite(temperature) && temperature >= 0, `temperature must be a number >= 0, got ${temperature}`);
  check(Number.isInteger(topK) && topK >= 0, `topK must be an integer >= 0 (0 = off), got ${topK}`);
  check(Number.isFinite(topP) && topP > 0 && topP <= 1, `topP must be in (0, 1], got ${topP}`);
  check(Number.isFinite(repetitionPenalty) && repetitionPenalty > 0,
        `repetitionPenalty must be a number > 0 (1 = off), got ${repetitionPenalty}`);
  check(seed === undefined || seed === null || Number.isInteger(seed), `seed must be an integer, got ${seed}`);
}

/** Divides positive / multiplies negative logits of every token already seen (in place). */
export function applyRepetitionPenalty(logits, seenTokenIds, penalty) {
  if (penalty === 1) return;
  for (const id of new Set(seenTokenIds)) {
    const value = logits[id];
    logits[id] = value > 0 ? value / penalty : value * penalty;
  }
}

export function argmax(logits) {
  let best = 0;
  let bestValue = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    if (logits[i] > bestValue) { bestValue = logits[i]; best = i; }
  }
  return best;
}

// Tokens whose scaled logit is this far below the maximum have probability
// below e^-40 relative to the best one; leaving them out of the sort changes
// no sample in practice and keeps top-p fast on 250k-token vocabularies.
const NEGLIGIBLE_LOGIT_GAP = 40;

/**
 * Picks a token id. temperature 0 -> greedy (argmax). Otherwise softmax over
 * logits/temperature restricted to the topK best and then to the smallest set
 * whose probability reaches topP, drawn with rng().
 */
export function sampleToken(logits, {temperature = 0, topK = 0, topP = 1}, rng) {
  if (!temperature) return argmax(logits);
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] > max) max = logits[i];
  const floor = max - NEGLIGIBLE_LOGIT_GAP * temperature;
  let candidates = [];
  for (let i = 0; i < logits.length; i++) if (logits[i] >= floor) candidates.push(i);
  candidates.sort((a, b) => logits[b] - logits[a] || a - b);
  if (topK > 0 && candidates.length > topK) candidates = candidates.slice(0, topK);

  const weights = new Float64Array(candidates.length);
  let total = 0;
  for (let j = 0; j < candidates.length; j++) {
    weights[j] = Math.exp((logits[candidates[j]] - max) / temperature);
    total += weights[j];
  }
  let kept = candidates.length;
  if (topP < 1) {
    let cumulative = 0;
    for (let j = 0; j < candidates.length; j++) {
      cumulative += weights[j] / total;
      if (cumulative >= topP) { kept = j + 1; break; }
    }
  }
  let keptTotal = 0;
  for (let j = 0; j < kept; j++) keptTotal += weights[j];
  let target = rng() * keptTotal;
  for (let j = 0; j < kept; j++) {
    target -= weights[j];
    if (target < 0) return candidates[j];
  }
  return candidates[kept - 1];
}
