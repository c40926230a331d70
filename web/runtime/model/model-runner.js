// One ONNX session plus its state: feeds built from the manifest and the
// session's own metadata (no per-architecture code), one call per chunk of
// new tokens, returning the last position's logits (or, from graphs that take
// manifest.appending_inputs.num_logits, each new position's). `cacheMode` says which
// graph the session runs: "standard" (present = past + new, CacheState) or
// "appending" (present = the new positions only, AppendingCacheState).
import {CacheState, TensorRefs, describeCache} from "../state/cache-state.js";
import {AppendingCacheState} from "../state/appending-cache.js";
import {NO_PHASE_TIMES} from "../decode/phase-times.js";

const CACHE_STATES = {standard: CacheState, appending: AppendingCacheState};

function inputRole(manifest, role) {
  return manifest.inputs?.[role] ?? null;
}

export class ModelRunner {
  constructor(ort, session, manifest, backend, cacheMode = "standard") {
    const CacheStateClass = CACHE_STATES[cacheMode];
    if (!CacheStateClass) throw new Error(`cacheMode must be one of ${Object.keys(CACHE_STATES).join(", ")}, got "${cacheMode}"`);
    this.ort = ort;
    this.session = session;
    this.manifest = manifest;
    this.backend = backend;
    this.cacheMode = cacheMode;
    this.refs = new TensorRefs();
    this.cache = new CacheStateClass(ort, describeCache(manifest, session), this.refs);
    this.processedIds = [];  // the tokens whose effect the live cache holds
    this.sessionMs = 0;      // time spent inside session.run, for stats
    this.names = {
      inputIds: inputRole(manifest, "input_ids"),
      attentionMask: inputRole(manifest, "attention_mask"),
      positionIds: inputRole(manifest, "position_ids"),
      numLogits: manifest.appending_inputs?.num_logits ?? null,  // appending graphs only
      logits: manifest.outputs?.logits ?? "logits",
    };
    this.positionShape = this.#positionLeadingDims();
    this.#checkInputsCovered();
    // Whether one call can return the logits of every new position (score), not only the last one's.
    this.scoresSeveralPositions = Boolean(this.names.numLogits) && session.inputNames.includes(this.names.numLogits);
    // Only these come back from session.run (nothing else is copied out).
    this.fetches = [this.names.logits, ...this.cache.entries.map((entry) => entry.output)];
    this.ones = new BigInt64Array(0);  // grown on demand; attention masks are views of it
  }

  static async create(ort, modelBytes, manifest, backend, externalData = [], cacheMode = "standard") {
    const options = {executionProviders: [backend], graphOptimizationLevel: "all"};
    if (externalData.length) options.externalData = externalData;
    if (backend === "webgpu") {
      // Keep the cache on the GPU between steps; only logits come back.
      const locations = {[manifest.outputs?.logits ?? "logits"]: "cpu"};
      for (const entry of manifest.cache ?? []) locations[entry.output] = "gpu-buffer";
      options.preferredOutputLocation = locations;
    }
    const session = await ort.InferenceSession.create(modelBytes, options);
    try {
      return new ModelRunner(ort, session, manifest, backend, cacheMode);
    } catch (error) {
      await session.release();
      throw error;
    }
  }

  #checkInputsCovered() {
    const known = new Set([this.names.inputIds, this.names.attentionMask, this.names.positionIds, this.names.numLogits,
                           ...this.cache.entries.map((e) => e.input)].filter(Boolean));
    if (!this.names.inputIds) throw new Error("manifest.inputs.input_ids is missing");
    const unknown = this.session.inputNames.filter((name) => !known.has(name));
    if (unknown.length) {
      throw new Error(`the ONNX graph takes inputs the manifest does not describe: ${unknown.join(", ")}`);
    }
    if (!this.session.outputNames.includes(this.names.logits)) {
      throw new Error(`the ONNX graph has no "${this.names.logits}" output (outputs: ${this.session.outputNames.join(", ")})`);
    }
  }

  // position_ids is [1, seq] for most models; some take [n, 1, seq] (multi-axis RoPE).
  #positionLeadingDims() {
    const meta = (this.session.inputMetadata ?? []).find((m) => m.name === this.names.positionIds);
    const shape = meta?.shape ?? [1, "sequence"];
    return shape.length === 3 && Number.isInteger(shape[0]) ? [shape[0], 1] : [1];
  }

  get vocabSize() { return this.manifest.vocab_size; }


  /**
   * Runs the model on new tokens after the processed ones; returns the last position's logits (the caller owns them).
   * `times` (a PhaseTimes) gets the feeds / run / outputs split.
   */
  async step(tokenIds, times = NO_PHASE_TIMES) {
    const logits = await this.#run(tokenIds, 1, times);
    return logits[0];
  }

  /** Like step, but returns the logits after each of the new tokens, in order (needs scoresSeveralPositions). */
  async score(tokenIds, times = NO_PHASE_TIMES) {
    if (tokenIds.length > 1 && !this.scoresSeveralPositions) {
      throw new Error("this graph returns only the last position's logits (no num_logits input)");
    }
    return this.#run(tokenIds, tokenIds.length, times);
  }

  async #run(tokenIds, scored, times) {
    const {ort, names} = this;
    const past = this.cache.length;
    const count = tokenIds.length;
    if (!count) throw new Error("step needs at least one token");
    const feeds = this.cache.feeds();
    feeds[names.inputIds] = new ort.Tensor("int64", BigInt64Array.from(tokenIds, BigInt), [1, count]);
    if (names.attentionMask) {
      feeds[names.attentionMask] = new ort.Tensor("int64", this.#onesView(past + count), [1, past + count]);
    }
    if (this.scoresSeveralPositions) feeds[names.numLogits] = new ort.Tensor("int64", BigInt64Array.of(BigInt(scored)), [1]);
    if (names.positionIds) {
      const copies = this.positionShape[0];
      const positions = new BigInt64Array(copies * count);
      for (let c = 0; c < copies; c++) for (let i = 0; i < count; i++) positions[c * count + i] = BigInt(past + i);
      feeds[names.positionIds] = new ort.Tensor("int64", positions, [...this.positionShape, count]);
    }
    times.mark("feeds");
    const runStarted = performance.now();
    const outputs = await this.session.run(feeds, this.fetches);
    this.sessionMs += performance.now() - runStarted;
    times.mark("run");
    const logitsTensor = outputs[names.logits];
    // onnxruntime-web hands back a fresh array (copied out of the WASM heap or
    // downloaded from the GPU) that nothing else holds: a view of it needs no copy.
    const data = logitsTensor.location === "cpu" ? logitsTensor.data : await logitsTensor.getData();
    const vocab = logitsTensor.dims[logitsTensor.dims.length - 1];
    const rows = [];
    for (let row = scored; row >= 1; row--) rows.push(data.subarray(data.length - row * vocab, data.length - (row - 1) * vocab));
    this.cache.adoptOutputs(outputs, past + count);
    logitsTensor.dispose?.();
    for (const id of tokenIds) this.processedIds.push(id);
    times.mark("outputs");
    return rows;
  }

  /** Forgets every processed position from `length` on (models whose state is KV only). */
  async truncate(length) {
    await this.cache.truncate(length);
    this.processedIds.length = length;
  }

  /** The state now, to go back to with rewind() while only new positions are added meanwhile. */
  checkpoint() {
    return {cache: this.cache.checkpoint(), processed: this.processedIds.length};
  }

  rewind(checkpoint) {
    this.cache.rewind(checkpoint.cache);
    this.processedIds.length = checkpoint.processed;
  }

  releaseCheckpoint(checkpoint) {
    this.cache.releaseCheckpoint(checkpoint.cache);
  }

  // A [length] view of ones, from one array grown by doubling (not a new array per step).
  #onesView(length) {
    if (this.ones.length < length) this.ones = new BigInt64Array(Math.max(length, 2 * this.ones.length)).fill(1n);
    return this.ones.subarray(0, length);
  }

  async release() {
    this.cache.dispose();
    this.processedIds = [];
    await this.session.release();
  }
}
