// Feeding each chosen token to the model during decoding, several tokens per
// call when the context suggests what comes next. With a guess d1..dk for the
// tokens after `t`, one call runs [t, d1..dk] and returns the logits after
// each; while the decoder picks exactly the guessed tokens, their logits are
// already there and no call is needed. At the first token that differs, the
// positions fed for the unused guesses are removed from the state: cut off
// (KV caches), or, for conv/recurrent state, which cannot be cut, by going
// back to the state before the call and running the confirmed tokens again.
// The decoder itself (sampling, logits processors, stop rules) sees the same
// logits in the same order as with one call per token; only greedy decoding
// uses guesses (a sampled token is not known in advance).
//
// The logits of a position are the same bits whichever call computes them:
// the exported attention sums its softmax in key order (blocks.py,
// softmax_in_key_order), and onnxruntime-web's WASM MatMuls do not depend on
// how many rows a call has (tests/runtime/test_draft_decoding.py checks both
// tokens and logits against one call per token).
import {proposeDraft} from "./prompt-lookup.js";
import {NO_PHASE_TIMES} from "./phase-times.js";

export class DraftFeeder {
  /**
   * @param runner a ModelRunner; @param maxDraft most guessed tokens per call (0: one token per call)
   * @param trimDraft optional (draft) -> how many of its tokens to keep: a grammar stops a guess at
   *   the first token it would refuse (that token could never be picked, so checking it is wasted)
   */
  constructor(runner, maxDraft, trimDraft = null) {
    this.runner = runner;
    this.maxDraft = runner.scoresSeveralPositions ? maxDraft : 0;
    this.limit = Math.min(this.maxDraft, 4);  // adapts to how many guesses hold
    // A miss costs a cut on a KV cache but a second call on conv/recurrent state: there, only
    // a 3-token match is worth a guess. (Simulated on the bench's SmolLM2 sequences with a
    // second call per miss: guessing from 1-token matches made short-context decode 0.72x as
    // fast as one call per token; from 3-token matches 0.98x, and 1.6-2.0x on the agent and
    // long-context runs.)
    this.lookup = {minNgram: runner.cache.truncatable ? 1 : 3};
    this.fed = [];         // the tokens of the last call
    this.pending = [];     // [{tokenId, logits}]: guesses of the last call not yet confirmed, with the logits after them
    this.checkpoint = null;  // the state before the last call (models whose state cannot be cut back)
    this.trimDraft = trimDraft;
    this.stats = {modelCalls: 0, draftedTokens: 0, acceptedDraftTokens: 0};
  }

  /** The logits after `tokenId`, which the decoder just chose; `history` is every token so far, `tokenId` last. */
  async next(tokenId, history, times = NO_PHASE_TIMES) {
    if (this.pending.length && this.pending[0].tokenId === tokenId) {
      this.stats.acceptedDraftTokens++;
      return this.pending.shift().logits;
    }
    await this.#adaptAndDropPending();
    let draft = this.maxDraft ? proposeDraft(history, this.limit, this.lookup) : [];
    if (draft.length && this.trimDraft) draft = draft.slice(0, this.trimDraft(draft));
    this.stats.modelCalls++;
    if (!draft.length) {
      this.fed = [];
      return this.runner.step([tokenId], times);
    }
    this.#releaseCheckpoint();
    if (!this.runner.cache.truncatable) this.checkpoint = this.runner.checkpoint();
    this.fed = [tokenId, ...draft];
    const logits = await this.runner.score(this.fed, times);
    this.stats.draftedTokens += draft.length;
    this.pending = draft.map((id, i) => ({tokenId: id, logits: logits[i + 1]}));
    return logits[0];
  }

  /** Ends the generation: the state holds exactly the tokens fed and confirmed. */
  async settle() {
    await this.#dropPending();
    this.#releaseCheckpoint();
  }

  async #adaptAndDropPending() {
    const drafted = this.fed.length - 1;
    if (drafted > 0) {
      // All held: guess further next time; otherwise guess about as far as held.
      this.limit = this.pending.length === 0 ? Math.min(this.maxDraft, this.limit + 2) :
        Math.max(1, drafted - this.pending.length + 1);
    }
    await this.#dropPending();
  }

  async #dropPending() {
    const unused = this.pending.length;
    this.pending = [];
    if (!unused) return;
    const {runner} = this;
    if (runner.cache.truncatable) {
      await runner.truncate(runner.processedIds.length - unused);
    } else {
      runner.rewind(this.checkpoint);
      this.stats.modelCalls++;
      await runner.step(this.fed.slice(0, this.fed.length - unused));
    }
  }

  #releaseCheckpoint() {
    if (this.checkpoint) this.runner.releaseCheckpoint(this.checkpoint);
    this.checkpoint = null;
  }
}
