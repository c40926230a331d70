// Hooks that edit the logits before sampling, named in generate options as
// `logitsProcessors: [{name, args}]`. This is where schema-constrained
// decoding plugs in: a processor sees every logits vector and every chosen
// token, so it can mask what the grammar does not allow.
//
// A factory gets (args, context) with context = {tokenizer, manifest, vocabSize}
// and returns {process(logits, tokenIds), accept(tokenId)}; process edits
// logits in place, accept is told the token that was chosen.

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
export function createLogitsProcessors(specs = [], context) {
  if (!Array.isArray(specs)) throw new TypeError("logitsProcessors must be an array of {name, args}");
  return specs.map((spec) => {
    const factory = registry.get(spec?.name);
    if (!factory) {
      throw new Error(`unknown logits processor "${spec?.name}"; known: ${listLogitsProcessors().join(", ") || "none"}`);
    }
    return factory(spec.args ?? {}, context);
  });
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
