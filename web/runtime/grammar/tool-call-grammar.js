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
//
// Greedy decoding (context.greedy) skips most masks. Inside a JSON string nearly the whole
// vocabulary is allowed and xgrammar checks each token against the grammar: ~70-180 ms a mask at
// a 151,936-token vocabulary, against ~0.05 ms elsewhere (bench/perf-0.5b.md). Greedy picks the
// best allowed token, so when the best token of all is allowed, no mask changes the pick:
// process checks that one token (acceptToken, then rollBack) and masks only when it is refused.
// The look-ahead of accept (is anything allowed after this token?) is then first answered by
// probing a few likely tokens (this step's best ones, the last ones accepted): one accepted
// proves it; only when none is does it compute the mask. A step that skipped its mask keeps its
// logits, and masks them after all if its token is refused, so the pick that follows is from
// allowed tokens. The tokens are the same as with every mask (args.everyMask: true masks every
// step, to compare).
//
// With args.untaggedCall (Hermes JSON), the reply's start is also watched for a call written
// without tags (untagged-call.js); once one is known, that call's own matcher takes over from
// the structural tag's for the rest of the reply. A token that completes such an opening but
// could not continue the call is refused like any other. No tokens are guessed while watching.
//
// With args.greedyCalls, the tokens that decide on a call or write one are picked greedily
// whatever the temperature (call-span.js): the processor says so in greedyNext, after process.
// Those steps skip masks as greedy decoding does, so a call written while sampling prose costs
// what a greedy one costs; the steps that sample still mask (cheap outside a call's strings).
import {CallSpan, callTagsOf} from "./call-span.js";
import {grammarEngineFor} from "./xgrammar-engine.js";
import {applyTokenBitmask} from "./token-bitmask.js";
import {UntaggedCallWatch, checkUntaggedCallArgs} from "./untagged-call.js";

/**
 * @typedef {object} ToolCallGrammarArgs
 * @property {object} structuralTag  xgrammar structural tag (triggered on <tool_call>; for Hermes JSON also on
 *                                   an untagged call object at the reply's start: py/botpsy_agent/grammar/reply_openings.py)
 * @property {string[]} [notes]      what the grammar leaves unconstrained, and why
 * @property {import("./untagged-call.js").UntaggedCallArgs} [untaggedCall]  a call opened without tags (Hermes JSON)
 * @property {boolean} [greedyCalls]  pick the tokens of a call, and the reply's choice of one, greedily
 */

const notesShown = new Set();

/** Factory for the logits-processor registry (logits-processors.js). */
export async function createToolCallGrammar(args, {tokenizer, manifest, vocabSize, greedy = false}) {
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
  const untaggedArgs = args.untaggedCall === undefined ? null : checkUntaggedCallArgs(args.untaggedCall);
  if (args.greedyCalls !== undefined && typeof args.greedyCalls !== "boolean") {
    throw new TypeError(`tool-call-grammar: args.greedyCalls must be true or false, got ${JSON.stringify(args.greedyCalls)}`);
  }
  const engine = await grammarEngineFor(tokenizer, {vocabSize, stopTokenIds: manifest.eos_token_ids ?? []});
  const {compiled, compileMs} = await engine.compileStructuralTag(JSON.stringify(structuralTag));
  const matcher = await engine.createMatcher(compiled);
  let untagged = null;
  let callCompileMs = 0;
  if (untaggedArgs) {
    let createCallMatcher = null;
    if (!untaggedArgs.forbid) {
      const call = await engine.compileStructuralTag(JSON.stringify(
        {type: "structural_tag", format: {type: "grammar", grammar: untaggedArgs.grammar}}));
      callCompileMs = call.compileMs;
      createCallMatcher = () => engine.createMatcher(call.compiled);
    }
    untagged = {watch: new UntaggedCallWatch(untaggedArgs, (id) => tokenizer.decode([id])), createCallMatcher};
  }
  // Greedy decoding picks every token greedily already: no span to follow then.
  const span = args.greedyCalls && !greedy ? new CallSpan(callTagsOf(structuralTag), (id) => tokenizer.decode([id])) : null;
  const grammar = new ToolCallGrammar(matcher, new Set(manifest.eos_token_ids ?? []), compileMs + callCompileMs,
                                      engine.setupMs, untagged, span);
  grammar.everyMask = args.everyMask === true;
  grammar.quickPicks = greedy && !grammar.everyMask;
  return grammar;
}

class ToolCallGrammar {
  constructor(matcher, stopIds, compileMs, engineSetupMs, untagged = null, span = null) {
    this.matcher = matcher;
    this.watch = untagged?.watch ?? null;       // the reply's start, while it may be an untagged call
    this.createCallMatcher = untagged?.createCallMatcher ?? null;  // null: such a call is refused
    this.callMatcher = null;                    // that call's matcher, once the call is known
    this.lastAccept = null;                     // what the last accept did, for unaccept
    this.stopIds = stopIds;
    this.maskMs = 0;
    this.masks = 0;
    this.refused = 0;      // picked tokens taken back (they completed a forbidden string)
    this.untaggedCalls = 0;  // calls opened without tags that the grammar took over
    this.nextMask = null;  // the mask after the last accepted token, computed by accept
    this.quickPicks = false;  // greedy: mask only when the best token is refused (see the top)
    this.everyMask = false;   // args.everyMask: never skip a mask (to compare against)
    this.unmasked = null;     // this step's logits, left unmasked by a quick pick
    this.probes = [];         // tokens that likely fit after the next accepted one
    this.recent = [];         // the last tokens accepted
    this.masksSkipped = 0;
    this.compileMs = compileMs;
    this.engineSetupMs = engineSetupMs;  // the vocabulary's table, once per loaded model
    this.span = span;         // args.greedyCalls: the reply's text, to know where a call is decided or written
    this.greedyNext = false;  // the next token is to be picked greedily (set by process)
    this.greedyPicks = 0;
  }

  /** Whether the next token decides on a call or belongs to one (args.greedyCalls only). */
  #decidingOrCalling() {
    if (!this.span) return false;
    if (this.callMatcher || (this.createCallMatcher && this.watch?.watching)) return true;  // an untagged call
    return this.span.decidingOrCalling;
  }

  /** This step's token is picked greedily (greedy decoding, or a call's token under greedyCalls):
   * then the mask is computed only when the best token is refused. Sampling needs every mask. */
  #picksGreedily() {
    return this.quickPicks || (this.greedyNext && this.everyMask !== true);
  }

  /** The matcher in charge: the untagged call's once it is known, else the structural tag's. */
  get active() {
    return this.callMatcher ?? this.matcher;
  }

  /** Masks what the grammar does not allow next. Returns a promise (the library's mask is async). */
  async process(logits) {
    this.unmasked = null;
    this.greedyNext = this.#decidingOrCalling();
    if (this.greedyNext) this.greedyPicks++;
    if (this.active.isTerminated()) return;  // after the stop token: no mask may be asked
    const started = performance.now();
    const quick = this.#picksGreedily();
    if (quick && !this.nextMask) {
      const best = argmax(logits);
      this.probes = [best, ...secondBest(logits, best)];
      if (!this.stopIds.has(best) && this.active.acceptToken(best)) {
        this.active.rollBack(1);
        this.unmasked = logits;
        this.masksSkipped++;
        this.maskMs += performance.now() - started;
        return;
      }
    }
    const mask = this.nextMask ?? await this.active.getNextTokenBitmask();
    this.nextMask = null;
    applyTokenBitmask(logits, mask);
    if (quick) {  // the best allowed tokens: likely to fit after the one picked, too
      const best = argmax(logits);
      this.probes = [best, ...secondBest(logits, best)];
    }
    this.maskMs += performance.now() - started;
    this.masks++;
  }

  /** Moves the matcher on; resolves to false (token taken back) when nothing could follow it. */
  async accept(tokenId) {
    const verdict = await this.#accept(tokenId);
    if (verdict === false && this.unmasked) await this.#maskAfterAll();
    else if (verdict) {
      this.recent = [tokenId, ...this.recent.filter((id) => id !== tokenId)].slice(0, 8);
      this.span?.push(tokenId);
    }
    return verdict;
  }

  /** A quick pick's token was refused: the pick that follows must be from allowed tokens. */
  async #maskAfterAll() {
    const started = performance.now();
    applyTokenBitmask(this.unmasked, await this.active.getNextTokenBitmask());
    this.unmasked = null;
    this.maskMs += performance.now() - started;
    this.masks++;
    this.masksSkipped--;
  }

  async #accept(tokenId) {
    const watched = this.callMatcher === null && this.watch?.watching;
    this.lastAccept = this.callMatcher ? "call" : watched ? "watched" : "tag";
    if (!(await this.#acceptInto(this.active, tokenId))) return false;
    if (!watched || this.watch.push(tokenId) !== "call") return true;
    if (await this.#openUntaggedCall()) return true;
    this.matcher.rollBack(1);  // a call that cannot open here (or may not at all): refused
    this.watch.pop();
    this.nextMask = null;
    this.refused++;
    return false;
  }

  /** Takes back the last accepted token (another processor refused it). */
  unaccept() {
    this.span?.pop();
    if (this.lastAccept === "switched") {
      this.callMatcher.dispose();
      this.callMatcher = null;
    }
    if (this.lastAccept === "call") this.callMatcher.rollBack(1);
    else this.matcher.rollBack(1);
    if (this.lastAccept === "watched" || this.lastAccept === "switched") this.watch.pop();
    this.nextMask = null;
  }

  /** How many of the guessed tokens (which would follow the accepted ones) the grammar allows in a row. */
  trimDraft(draft) {
    if (this.callMatcher === null && this.watch?.watching) return 0;  // the reply's start is taken token by token
    const matcher = this.active;
    let kept = 0;
    for (const tokenId of draft) {
      if (matcher.isTerminated()) break;
      if (this.stopIds.has(tokenId)) { kept++; break; }  // never accepted ahead: the matcher would end
      if (!matcher.acceptToken(tokenId)) break;
      kept++;
    }
    const accepted = kept && this.stopIds.has(draft[kept - 1]) ? kept - 1 : kept;
    if (accepted) matcher.rollBack(accepted);
    return kept;
  }

  async #acceptInto(matcher, tokenId) {
    if (matcher.isTerminated()) return true;
    if (!matcher.acceptToken(tokenId)) {
      if (this.unmasked) return false;  // a quick pick's logits were not masked: refused, then masked
      // Only possible when something after the mask revived a banned token: our bug.
      throw new Error(`tool-call-grammar: token ${tokenId} was picked although the grammar does not allow it`);
    }
    if (matcher.isTerminated()) return true;
    const started = performance.now();
    if (this.#picksGreedily() && this.#anyProbeFits(matcher)) {
      this.maskMs += performance.now() - started;
      return true;  // something can follow: the next step's pick is checked on its own
    }
    const mask = await matcher.getNextTokenBitmask();
    this.maskMs += performance.now() - started;
    if (!allowsAny(mask)) {
      matcher.rollBack(1);
      this.refused++;
      return false;
    }
    this.nextMask = mask;
    return true;
  }

  /** Whether one of the likely next tokens is allowed (then the state after this token is no dead end). */
  #anyProbeFits(matcher) {
    for (const probe of [...this.probes, ...this.recent]) {
      if (this.stopIds.has(probe) || !matcher.acceptToken(probe)) continue;
      matcher.rollBack(1);
      return true;
    }
    return false;
  }

  /** The reply so far opens a call without tags: its own matcher, fed the reply from the start,
   * takes over. False when it may not (toolCalls "none") or the last token cannot continue it. */
  async #openUntaggedCall() {
    if (!this.createCallMatcher) return false;
    const matcher = await this.createCallMatcher();
    const started = performance.now();
    const fits = this.watch.tokens.every((tokenId) => matcher.acceptToken(tokenId));
    const mask = fits ? await matcher.getNextTokenBitmask() : null;
    this.maskMs += performance.now() - started;
    if (!mask || !allowsAny(mask)) {
      matcher.dispose();
      return false;
    }
    this.callMatcher = matcher;
    this.untaggedCalls++;
    this.lastAccept = "switched";
    this.nextMask = mask;
    return true;
  }

  /** Figures for the generation's stats. */
  get stats() {
    return {grammarCompileMs: round(this.compileMs), grammarMaskMs: round(this.maskMs), grammarMasks: this.masks,
            grammarRefusedTokens: this.refused, grammarEngineSetupMs: round(this.engineSetupMs),
            grammarMasksSkipped: this.masksSkipped,
            grammarUntaggedCalls: this.untaggedCalls, grammarGreedyPicks: this.greedyPicks};
  }

  dispose() {
    this.matcher.dispose();
    this.callMatcher?.dispose();
  }
}

const round = (ms) => Math.round(ms * 100) / 100;

function argmax(logits) {  // the first of equal maxima, as greedy sampling picks (decode/sampling.js)
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  return best;
}

/** The next best tokens after `best` (probes for the look-ahead: likely to fit where `best` did). */
function secondBest(logits, best, count = 3) {
  const top = [];
  for (let i = 0; i < logits.length; i++) {
    if (i === best || (top.length === count && logits[i] <= logits[top[count - 1]])) continue;
    top.push(i);
    top.sort((a, b) => logits[b] - logits[a]);
    if (top.length > count) top.pop();
  }
  return top;
}

function allowsAny(mask) {
  for (let word = 0; word < mask.length; word++) if (mask[word] !== 0) return true;
  return false;
}
