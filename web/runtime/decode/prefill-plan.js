// How a prompt's new tokens are cut into graph calls. A call of T new tokens after P
// processed ones computes heads x T x (P + T) attention scores, and the graph holds a
// few tensors of that size at once (scores, masked, exponentiated, normalised). At a
// fixed chunk the scores grow with the context: 1,024 tokens against 20,000 were over
// 1 GiB each, past WASM's 4 GiB heap. So a chunk is the longest that keeps one score
// tensor within SCORE_BUDGET_BYTES, and never longer than MAX_PREFILL_CHUNK. How a prompt
// is cut changes no result: a prompt split across calls gives the same logits as one
// call (the export's cached_attention), so only speed and memory depend on it.

export const MAX_PREFILL_CHUNK = 1024;
export const MIN_PREFILL_CHUNK = 8;
export const SCORE_BUDGET_BYTES = 128 * 2 ** 20;
// For a folder exported before manifests named their attention heads: more than our models have.
export const DEFAULT_ATTENTION_HEADS = 32;

/** Query heads the prefill is sized for: the manifest's `attention_heads`, else DEFAULT_ATTENTION_HEADS. */
export function attentionHeads(manifest) {
  const heads = manifest.attention_heads;
  if (heads === undefined || heads === null) return DEFAULT_ATTENTION_HEADS;
  if (!Number.isInteger(heads) || heads < 1) {
    throw new RangeError(`manifest.attention_heads must be an integer >= 1, got ${JSON.stringify(heads)}`);
  }
  return heads;
}

/** The bytes of one float32 score tensor for `count` new tokens after `past`. */
export function scoreBytes(heads, past, count) {
  return 4 * heads * count * (past + count);
}

/** The longest chunk after `past` processed tokens whose scores fit the budget (at least MIN_PREFILL_CHUNK). */
export function chunkLength(heads, past) {
  const cells = SCORE_BUDGET_BYTES / (4 * heads);  // count * (past + count) <= cells
  let count = Math.floor((Math.sqrt(past * past + 4 * cells) - past) / 2);
  while (count > 1 && scoreBytes(heads, past, count) > SCORE_BUDGET_BYTES) count--;  // float rounding
  return Math.max(MIN_PREFILL_CHUNK, Math.min(MAX_PREFILL_CHUNK, count));
}

/**
 * The calls that take a prompt of `length` tokens from `from` processed ones to the end:
 * [start, end, snapshotAfter] each. A chunk ends at every snapshot point (the prefix
 * cache takes a snapshot there); snapshotAfter is false for the prompt's end.
 */
export function prefillChunks(length, from, snapshotPoints, heads) {
  const chunks = [];
  let start = from;
  for (const cut of [...snapshotPoints, length]) {
    while (start < cut) {
      const end = Math.min(cut, start + chunkLength(heads, start));
      chunks.push([start, end, end === cut && cut !== length]);
      start = end;
    }
  }
  return chunks;
}
