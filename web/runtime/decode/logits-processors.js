// Hooks that edit the logits before sampling, named in generate options as
// `logitsProcessors: [{name, args}]`. A processor sees every logits vector and every
// chosen token, so it can mask what a grammar does not allow ("tool-call-grammar":
// grammar/tool-call-grammar.js).
//
// A factory gets (args, context) with context = {tokenizer, manifest, vocabSize, greedy} (greedy:
// the token picked is the highest logit after every processor, nothing changes logits after them) and
// returns (or resolves to: compiling a grammar is async) an object with
//   process(logits, tokenIds)  edits logits in place; may return a promise, which the
//                              decode loop then awaits (only then: the free path stays sync)
//   accept(tokenId)            told the token that was chosen; may return (a promise of) false:
//                              the token is refused, and the decoder picks another
//   unaccept()                 optional: take the last accepted token back (another processor refused it)
//   trimDraft(draft)           optional: how many of these guessed next tokens it allows in a row
//   stats                      optional: figures added to the generation's stats
//   dispose()                  optional: frees what it holds when the generation ends
import {createToolCallGrammar} from "../grammar/tool-call-grammar.js";

const registry = new Map();

export function registerLogitsProcessor(name, factory) {
  if (typeof name !== "string" || !name) throw new TypeError("a logits processor needs a non-empty name");
  if (typeof factory !== "function") throw new TypeError(`logits processor "${name}": factory must be a function`);
  registry.set(name, factory);
}

export function listLogitsProcessors() {
  return [...registry.keys()];
}

/** Builds the processors named in options; an unknown name is an error that lists the known ones. */
export async function createLogitsProcessors(specs = [], context) {
  if (!Array.isArray(specs)) throw new TypeError("logitsProcessors must be an array of {name, args}");
  const factories = specs.map((spec) => {
    const factory = registry.get(spec?.name);
    if (!factory) {
      throw new Error(`unknown logits processor "${spec?.name}"; known: ${listLogitsProcessors().join(", ") || "none"}`);
    }
    return [factory, spec.args ?? {}];
  });
  const made = await Promise.allSettled(factories.map(async ([factory, args]) => factory(args, context)));
  const processors = made.filter((result) => result.status === "fulfilled").map((result) => result.value);
  const failed = made.find((result) => result.status === "rejected");
  if (failed) {
    disposeLogitsProcessors(processors);
    throw failed.reason;
  }
  return processors;
}

export function disposeLogitsProcessors(processors) {
  for (const processor of processors) processor.dispose?.();
}

// Built-in: add a fixed bias to some token ids ({bias: {"123": -100}}).
// Also what the tests use to prove the hook runs before sampling.
registerLogitsProcessor("token-bias", ({bias = {}}, {vocabSize}) => {
  const entries = Object.entries(bias).map(([id, value]) => {
    const tokenId = Number(id);
    if (!Number.isInteger(tokenId) || tokenId < 0 || tokenId >= vocabSize) {
      throw new RangeError(`token-bias: token id ${id} is outside the vocabulary (0..${vocabSize - 1})`);
    }
    if (!Number.isFinite(value) && value !== -Infinity) throw new RangeError(`token-bias: bias for ${id} is not a number`);
    return [tokenId, value];
  });
  return {
    process(logits) { for (const [id, value] of entries) logits[id] += value; },
    accept() {},
  };
});

// Grammar-constrained tool calls (args from botpsy_agent.grammar.logits_processor_spec).
registerLogitsProcessor("tool-call-grammar", createToolCallGrammar);
