// The model's state tensors (KV, conv, recurrent), named, shaped and
// zero-initialised from manifest.cache, checked against the session's own
// input/output names. Tensors may be shared between the live state and
// prefix snapshots, so each is reference-counted and disposed (freeing its
// GPU buffer) only when nothing holds it any more. This is the state of the
// standard graphs (present = past + new, returned whole); appending graphs on
// WASM use AppendingCacheState (appending-cache.js), which has the same interface.

export const TYPED_ARRAYS = {
  float32: Float32Array,
  float16: Uint16Array,  // raw IEEE half bits; zeros are zeros
  int64: BigInt64Array,
  int32: Int32Array,
};

export const TRUNCATABLE_KINDS = new Set(["key", "value"]);

/** Checks manifest.cache against the session; returns the cache entries in graph order. */
export function describeCache(manifest, session) {
  const inputs = new Set(session.inputNames);
  const outputs = new Set(session.outputNames);
  const metadata = new Map((session.inputMetadata ?? []).map((m) => [m.name, m]));
  const entries = manifest.cache ?? [];
  for (const entry of entries) {
    if (!inputs.has(entry.input)) throw new Error(`manifest cache input "${entry.input}" is not an input of the ONNX graph`);
    if (!outputs.has(entry.output)) throw new Error(`manifest cache output "${entry.output}" is not an output of the ONNX graph`);
    if (!TYPED_ARRAYS[entry.dtype]) throw new Error(`cache "${entry.input}": unsupported dtype "${entry.dtype}"`);
    const declared = metadata.get(entry.input);
    if (declared?.isTensor && declared.type && declared.type !== entry.dtype) {
      throw new Error(`cache "${entry.input}": manifest says ${entry.dtype} but the graph takes ${declared.type}`);
    }
    if (TRUNCATABLE_KINDS.has(entry.kind) !== (entry.seq_axis !== null && entry.seq_axis !== undefined)) {
      throw new Error(`cache "${entry.input}": kind "${entry.kind}" and seq_axis ${entry.seq_axis} disagree`);
    }
  }
  return entries;
}

export class TensorRefs {
  constructor() {
    this.counts = new Map();
    this.gpuTensorsDisposed = 0;  // running total, reported in generate's stats
  }
  hold(tensor) {
    const held = this.counts.get(tensor);
    if (held) held.count++;
    else this.counts.set(tensor, {count: 1, onGpu: tensor.location === "gpu-buffer"});
    return tensor;
  }
  release(tensor) {
    const held = this.counts.get(tensor);
    if (held && --held.count > 0) return;
    this.counts.delete(tensor);
    // Where it was when held: a GPU tensor read back with getData() says "cpu"
    // afterwards but keeps its GPU buffer until dispose().
    if (held?.onGpu ?? tensor.location === "gpu-buffer") {
      tensor.dispose();
      this.gpuTensorsDisposed++;
    }
  }
  releaseAll(tensors) { for (const tensor of tensors) this.release(tensor); }
}

export class CacheState {
  /** @param ort the onnxruntime-web module; @param entries from describeCache */
  constructor(ort, entries, refs) {
    this.ort = ort;
    this.entries = entries;
    this.refs = refs;
    this.tensors = new Map();
    this.length = 0;
    this.truncatable = entries.every((entry) => TRUNCATABLE_KINDS.has(entry.kind));
    this.reset();
  }

  /** KV positions held: exactly the processed ones (appending mode keeps room for more). */
  get capacity() { return this.length; }

  /** Back to zero-initial tensors (nothing processed). */
  reset() {
    this.refs.releaseAll(this.tensors.values());
    this.tensors = new Map();
    for (const entry of this.entries) {
      const size = entry.shape.reduce((a, b) => a * b, 1);
      const tensor = new this.ort.Tensor(entry.dtype, new TYPED_ARRAYS[entry.dtype](size), entry.shape);
      this.tensors.set(entry.input, this.refs.hold(tensor));
    }
    this.length = 0;
  }

  /** How many live state tensors are where: {"cpu": n, "gpu-buffer": m}. */
  locations() {
    const counts = {};
    for (const tensor of this.tensors.values()) counts[tensor.location] = (counts[tensor.location] ?? 0) + 1;
    return counts;
  }

  /** The feeds for session.run. */
  feeds() {
    return Object.fromEntries(this.tensors);
  }

  /** Takes the graph's present.* outputs as the new state covering `length` tokens. */
  adoptOutputs(outputs, length) {
    for (const entry of this.entries) {
      const tensor = outputs[entry.output];
      if (!tensor) throw new Error(`the graph did not return cache output "${entry.output}"`);
      this.refs.release(this.tensors.get(entry.input));
      this.tensors.set(entry.input, this.refs.hold(tensor));
    }
    this.length = length;
  }

  /** The current tensors, held for a snapshot (release with releaseSnapshot). */
  snapshot() {
    const tensors = new Map(this.tensors);
    for (const tensor of tensors.values()) this.refs.hold(tensor);
    return {tensors, length: this.length};
  }

  releaseSnapshot(snapshot) {
    this.refs.releaseAll(snapshot.tensors.values());
  }

  /** Makes a snapshot's tensors the live state. */
  restore(snapshot) {
    for (const tensor of snapshot.tensors.values()) this.refs.hold(tensor);
    this.refs.releaseAll(this.tensors.values());
    this.tensors = new Map(snapshot.tensors);
    this.length = snapshot.length;
  }

  /**
   * The state's bytes for storing it (prompt-state.js): {length, tensors: [{input, dims, bytes}]} in
   * graph order. The bytes are views: copy them before the next step (GPU tensors are read back).
   */
  async exportState() {
    const tensors = [];
    for (const entry of this.entries) {
      const tensor = this.tensors.get(entry.input);
      const data = tensor.location === "cpu" ? tensor.data : await tensor.getData();
      tensors.push({input: entry.input, dims: [...tensor.dims], bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength)});
    }
    return {length: this.length, tensors};
  }

  /** Makes a stored state (exportState's shape, dims already checked) the live state; the bytes are copied. */
  importState({length, tensors}) {
    const fresh = new Map();
    for (const entry of this.entries) {
      const {dims, bytes} = tensors.find((tensor) => tensor.input === entry.input);
      const data = new TYPED_ARRAYS[entry.dtype](bytes.slice().buffer);
      fresh.set(entry.input, this.refs.hold(new this.ort.Tensor(entry.dtype, data, dims)));
    }
    this.refs.releaseAll(this.tensors.values());
    this.tensors = fresh;
    this.length = length;
  }

  /** The state now, to go back to with rewind() (here a snapshot: tensors are shared, not copied). */
  checkpoint() { return this.snapshot(); }
  rewind(checkpoint) { this.restore(checkpoint); }
  releaseCheckpoint(checkpoint) { this.releaseSnapshot(checkpoint); }

  /** Cuts every KV tensor back to `length` positions along its seq_axis (KV-only models). */
  async truncate(length) {
    if (!this.truncatable) throw new Error("this model has recurrent or conv state, which cannot be truncated");
    if (length >= this.length) return;
    for (const entry of this.entries) {
      const old = this.tensors.get(entry.input);
      const data = old.location === "cpu" ? old.data : await old.getData();
      const dims = [...old.dims];
      const outer = dims.slice(0, entry.seq_axis).reduce((a, b) => a * b, 1);
      const inner = dims.slice(entry.seq_axis + 1).reduce((a, b) => a * b, 1);
      const oldRow = dims[entry.seq_axis] * inner;
      const newRow = length * inner;
      const cut = new TYPED_ARRAYS[entry.dtype](outer * newRow);
      for (let o = 0; o < outer; o++) cut.set(data.subarray(o * oldRow, o * oldRow + newRow), o * newRow);
      dims[entry.seq_axis] = length;
      this.refs.release(old);
      this.tensors.set(entry.input, this.refs.hold(new this.ort.Tensor(entry.dtype, cut, dims)));
    }
    this.length = length;
  }

  dispose() {
    this.refs.releaseAll(this.tensors.values());
    this.tensors = new Map();
    this.length = 0;
  }
}
