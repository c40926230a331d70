// Guessing the next tokens from the context (prompt-lookup decoding): the
// last few tokens usually occurred before, in the prompt or in what was
// generated, and what followed them then is a good guess for what follows
// now. An agent's output copies a lot (tool names, argument values, quoted
// text), so the guesses often hold. The model checks every guess (see
// draft-feeder.js); a wrong guess costs time, never a different token.

/**
 * Up to `maxTokens` tokens that followed the latest earlier occurrence of the
 * last n tokens of `history`, for the longest n in [minNgram, maxNgram] that
 * occurred before; [] when none did.
 */
export function proposeDraft(history, maxTokens, {maxNgram = 3, minNgram = 1} = {}) {
  const length = history.length;
  if (maxTokens < 1) return [];
  for (let n = Math.min(maxNgram, length - 1); n >= minNgram; n--) {
    const tail = length - n;
    // Latest first: the most recent context predicts best. An occurrence starts
    // before the tail does, so at least one token follows it.
    for (let start = tail - 1; start >= 0; start--) {
      let matched = 0;
      while (matched < n && history[start + matched] === history[tail + matched]) matched++;
      if (matched === n) return history.slice(start + n, Math.min(start + n + maxTokens, length));
    }
  }
  return [];
}
