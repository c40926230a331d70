// The "tool-call-grammar" logits processor: keeps every tool call the model writes well
// formed and valid for the offered tools' schemas, in the model's own format, while text
// and thinking stay free. Its args come from the agent (py/botpsy_agent/grammar:
// logits_processor_spec), which builds the constraint from the same tool schemas the
// prompt shows the model; this module only compiles and applies it with xgrammar.
//
// Per token: the matcher's bitmask is applied before the token is picked (process), and
// the picked token moves the matcher on (accept). A string the grammar forbids (a call
// opening under "none", </tool_call> inside a value...) leads to a rule that matches
// nothing; xgrammar's mask still lets through the token that completes it, so accept looks
// one mask ahead: when nothing could follow, the token is taken back and the decoder picks
// another (that mask is the next process's, so no extra work). With guessed tokens (draft-feeder.js)
// each position is still masked before its token is picked, so a guess the grammar
// rejects can never be kept; trimDraft also stops guessing at the first token the
// grammar would refuse, so no model call is spent on it.
import {grammarEngineFor} from "./xgrammar-engine.js";
import {applyTokenBitmask} from "./token-bitmask.js";

/**
 * @typedef {object} ToolCallGrammarArgs
 * @property {object} structuralTag  xgrammar structural tag (triggered on <tool_call>; for Hermes JSON also on
 *                                   an untagged call object at the reply's start: py/botpsy_agent/grammar/reply_openings.py)
 * @property {string[]} [notes]      what the grammar leaves unconstrained, and why
 */

const notesShown = new Set();

/** Factory for the logits-processor registry (logits-processors.js). */
export async function createToolCallGrammar(args, {tokenizer, manifest, vocabSize}) {
  const {structuralTag, notes = []} = args ?? {};
  if (!structuralTag || typeof structuralTag !== "object") {
    throw new TypeError("tool-call-grammar: args.structuralTag is missing (build the args with " +
      "botpsy_agent.grammar.logits_processor_spec)");
  }
  if (!Array.isArray(notes)) throw new TypeError("tool-call-grammar: args.notes must be an array of strings");
  for (const note of notes) {
    if (notesShown.has(note)) continue;
    notesShown.add(note);
    console.info(`botpsy: tool-call grammar leaves a value unconstrained: ${note}`);
  }
  const engine = await grammarEngineFor(tokenizer, {vocabSize, stopTokenIds: manifest.eos_token_ids ?? []});
  const {compiled, compileMs} = await engine.compileStructuralTag(JSON.stringify(structuralTag));
  const matcher = await engine.createMatcher(compiled);
  return new ToolCallGrammar(matcher, new Set(manifest.eos_token_ids ?? []), compileMs, engine.setupMs);
}

class ToolCallGrammar {
  constructor(matcher, stopIds, compileMs, engineSetupMs) {
    this.matcher = matcher;
    this.stopIds = stopIds;
    this.maskMs = 0;
    this.masks = 0;
    this.refused = 0;      // picked tokens taken back (they completed a forbidden string)
    this.nextMask = null;  // the mask after the last accepted token, computed by accept
    this.compileMs = compileMs;
    this.engineSetupMs = engineSetupMs;  // the vocabulary's table, once per loaded model
  }

  /** Masks what the grammar does not allow next. Returns a promise (the library's mask is async). */
  async process(logits) {
    if (this.matcher.isTerminated()) return;  // after the stop token: no mask may be asked
    const started = performance.now();
    const mask = this.nextMask ?? await this.matcher.getNextTokenBitmask();
    this.nextMask = null;
    applyTokenBitmask(logits, mask);
    this.maskMs += performance.now() - started;
    this.masks++;
  }

  /** Moves the matcher on; resolves to false (token taken back) when nothing could follow it. */
  async accept(tokenId) {
    if (this.matcher.isTerminated()) return true;
    if (!this.matcher.acceptToken(tokenId)) {
      // Only possible when something after the mask revived a banned token: our bug.
      throw new Error(`tool-call-grammar: token ${tokenId} was picked although the grammar does not allow it`);
    }
    if (this.matcher.isTerminated()) return true;
    const started = performance.now();
    const mask = await this.matcher.getNextTokenBitmask();
    this.maskMs += performance.now() - started;
    if (!allowsAny(mask)) {
      this.matcher.rollBack(1);
      this.refused++;
      return false;
    }
    this.nextMask = mask;
    return true;
  }

  /** Takes back the last accepted token (another processor refused it). */
  unaccept() {
    this.matcher.rollBack(1);
    this.nextMask = null;
  }

  /** How many of the guessed tokens (which would follow the accepted ones) the grammar allows in a row. */
  trimDraft(draft) {
    let kept = 0;
    for (const tokenId of draft) {
      if (this.matcher.isTerminated()) break;
      if (this.stopIds.has(tokenId)) { kept++; break; }  // never accepted ahead: the matcher would end
      if (!this.matcher.acceptToken(tokenId)) break;
      kept++;
    }
    const accepted = kept && this.stopIds.has(draft[kept - 1]) ? kept - 1 : kept;
    if (accepted) this.matcher.rollBack(accepted);
    return kept;
  }

  /** Figures for the generation's stats. */
  get stats() {
    return {grammarCompileMs: round(this.compileMs), grammarMaskMs: round(this.maskMs), grammarMasks: this.masks,
            grammarRefusedTokens: this.refused, grammarEngineSetupMs: round(this.engineSetupMs)};
  }

  dispose() {
    this.matcher.dispose();
  }
}

const round = (ms) => Math.round(ms * 100) / 100;

function allowsAny(mask) {
  for (let word = 0; word < mask.length; word++) if (mask[word] !== 0) return true;
  return false;
}
