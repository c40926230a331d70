// The model state for "appending" graphs (WASM; docs/contracts.md section 1):
// each KV cache lives in one buffer with room for `capacity` positions along
// its seq_axis, fed whole every step (the attention mask hides the unused
// positions [length, capacity)). The graph returns only the new positions,
// which are written in at [length, length + new), so no full copy of the cache
// comes out of the graph each step, and truncating is setting `length`.
// Conv and recurrent state are replaced whole each step, as in CacheState.
//
// Snapshots share the KV buffers instead of copying them: a snapshot covers
// positions [0, its length). A write that would overwrite positions some held
// snapshot still covers first moves the live state to a copy (copy-on-write).
// Same interface as CacheState (cache-state.js); the runner picks the class.
import {TRUNCATABLE_KINDS, TYPED_ARRAYS} from "./cache-state.js";

// Growth rounds up to this many positions. Every step feeds (and onnxruntime-web
// copies into its heap) the whole capacity, so unused room costs on every step,
// while growing costs one copy of the cache: growing in small steps (not x1.5)
// keeps the unused room under CAPACITY_STEP positions for a copy every ~64 tokens.
export const CAPACITY_STEP = 64;

/** The capacity that holds `needed` positions. */
export function capacityFor(needed) {
  return Math.ceil(needed / CAPACITY_STEP) * CAPACITY_STEP;
}

const product = (dims) => dims.reduce((a, b) => a * b, 1);

/** How an entry's buffer is laid out: `rows` blocks of capacity x `inner` values. */
function layoutOf(entry) {
  return {rows: product(entry.shape.slice(0, entry.seq_axis)), inner: product(entry.shape.slice(entry.seq_axis + 1))};
}

/** The same bytes as `ArrayType` (onnxruntime-web may hand float16 back as Float16Array; we keep raw bits). */
function asArrayType(data, ArrayType) {
  if (data instanceof ArrayType) return data;
  return new ArrayType(data.buffer, data.byteOffset, data.byteLength / ArrayType.BYTES_PER_ELEMENT);
}

/** One buffer per KV entry, all with the same capacity, and the snapshots that read them. */
class KvBuffers {
  constructor(entries, capacity) {
    this.capacity = capacity;
    this.arrays = new Map(entries.map((entry) => {
      const {rows, inner} = layoutOf(entry);
      return [entry.input, new TYPED_ARRAYS[entry.dtype](rows * capacity * inner)];
    }));
    this.snapshots = new Set();  // each still reads positions [0, snapshot.length)
  }

  /** Positions [0, n) that some held snapshot still reads. */
  get protectedLength() {
    let length = 0;
    for (const snapshot of this.snapshots) length = Math.max(length, snapshot.length);
    return length;
  }

  /** New buffers with room for `capacity` positions, holding positions [0, length) of these. */
  copy(entries, length, capacity) {
    const copy = new KvBuffers(entries, capacity);
    for (const entry of entries) {
      const {rows, inner} = layoutOf(entry);
      const from = this.arrays.get(entry.input);
      const to = copy.arrays.get(entry.input);
      for (let row = 0; row < rows; row++) {
        const start = row * this.capacity * inner;
        to.set(from.subarray(start, start + length * inner), row * capacity * inner);
      }
    }
    return copy;
  }
}

export class AppendingCacheState {
  /** @param ort the onnxruntime-web module; @param entries from describeCache; @param refs a TensorRefs */
  constructor(ort, entries, refs) {
    this.ort = ort;
    this.entries = entries;
    this.refs = refs;
    this.kvEntries = entries.filter((entry) => TRUNCATABLE_KINDS.has(entry.kind));
    this.fixedEntries = entries.filter((entry) => !TRUNCATABLE_KINDS.has(entry.kind));
    this.truncatable = this.fixedEntries.length === 0;
    this.kv = new KvBuffers(this.kvEntries, 0);
    this.fixed = new Map();  // conv / recurrent tensors, replaced whole each step
    this.length = 0;
    this.reset();
  }

  /** Positions fed as the past; those in [length, capacity) are masked out. */
  get capacity() { return this.kv.capacity; }

  /** Nothing processed: zero conv/recurrent state; the KV buffers are kept for reuse. */
  reset() {
    this.refs.releaseAll(this.fixed.values());
    this.fixed = new Map(this.fixedEntries.map((entry) => {
      const zeros = new TYPED_ARRAYS[entry.dtype](product(entry.shape));
      return [entry.input, this.refs.hold(new this.ort.Tensor(entry.dtype, zeros, entry.shape))];
    }));
    this.length = 0;
  }

  /** How many state tensors are where: all in JS memory ({"cpu": n}). */
  locations() {
    const counts = {cpu: this.kvEntries.length};
    for (const tensor of this.fixed.values()) counts[tensor.location] = (counts[tensor.location] ?? 0) + 1;
    return counts;
  }

  /** The feeds for session.run: every KV buffer whole (capacity positions) and the fixed-size state. */
  feeds() {
    const feeds = Object.fromEntries(this.fixed);
    for (const entry of this.kvEntries) {
      const dims = [...entry.shape];
      dims[entry.seq_axis] = this.kv.capacity;
      feeds[entry.input] = new this.ort.Tensor(entry.dtype, this.kv.arrays.get(entry.input), dims);
    }
    return feeds;
  }

  /** Writes the graph's new KV positions in at [this.length, length); takes its conv/recurrent state. */
  adoptOutputs(outputs, length) {
    const start = this.length;
    const count = length - start;
    for (const entry of this.entries) {
      if (!outputs[entry.output]) throw new Error(`the graph did not return cache output "${entry.output}"`);
    }
    for (const entry of this.kvEntries) checkNewPositions(entry, outputs[entry.output], count);
    this.#makeWritable(start, length);
    for (const entry of this.kvEntries) {
      const {rows, inner} = layoutOf(entry);
      const ArrayType = TYPED_ARRAYS[entry.dtype];
      const added = asArrayType(outputs[entry.output].data, ArrayType);
      const buffer = this.kv.arrays.get(entry.input);
      const capacity = this.kv.capacity;
      for (let row = 0; row < rows; row++) {
        buffer.set(added.subarray(row * count * inner, (row + 1) * count * inner), (row * capacity + start) * inner);
      }
      outputs[entry.output].dispose?.();
    }
    for (const entry of this.fixedEntries) {
      this.refs.release(this.fixed.get(entry.input));
      this.fixed.set(entry.input, this.refs.hold(outputs[entry.output]));
    }
    this.length = length;
  }

  // Before writing positions [start, end): a copy when a snapshot still reads
  // them (copy-on-write), when the buffers are too small (growth), or when a
  // reset or cut-back left much more room than needed (which every step would feed).
  #makeWritable(start, end) {
    const {capacity} = this.kv;
    const needed = capacityFor(end);
    const resize = end > capacity || capacity > needed + CAPACITY_STEP;
    if (!resize && this.kv.protectedLength <= start) return;
    this.kv = this.kv.copy(this.kvEntries, start, resize ? needed : capacity);
  }

  /** The current state for a snapshot (release with releaseSnapshot): shares the KV buffers, no copy. */
  snapshot() {
    const snapshot = {kv: this.kv, length: this.length, fixed: new Map(this.fixed)};
    for (const tensor of snapshot.fixed.values()) this.refs.hold(tensor);
    this.kv.snapshots.add(snapshot);
    return snapshot;
  }

  releaseSnapshot(snapshot) {
    snapshot.kv.snapshots.delete(snapshot);
    this.refs.releaseAll(snapshot.fixed.values());
  }

  /** Makes a snapshot's state the live state (its buffers are shared until a write needs a copy). */
  restore(snapshot) {
    for (const tensor of snapshot.fixed.values()) this.refs.hold(tensor);
    this.refs.releaseAll(this.fixed.values());
    this.fixed = new Map(snapshot.fixed);
    this.kv = snapshot.kv;
    this.length = snapshot.length;
  }

  /** Forgets every position from `length` on (KV-only models). */
  async truncate(length) {
    if (!this.truncatable) throw new Error("this model has recurrent or conv state, which cannot be truncated");
    if (length < this.length) this.length = length;
  }

  dispose() {
    this.refs.releaseAll(this.fixed.values());
    this.fixed = new Map();
    this.kv = new KvBuffers(this.kvEntries, 0);
    this.length = 0;
  }
}

// An appending graph returns only the new positions; a standard graph given by
// mistake as `appending_file` returns past + new, caught here.
function checkNewPositions(entry, tensor, count) {
  const expected = [...entry.shape];
  expected[entry.seq_axis] = count;
  if (tensor.type !== entry.dtype || tensor.dims.length !== expected.length ||
      tensor.dims.some((dim, axis) => dim !== expected[axis])) {
    throw new Error(`appending graph output "${entry.output}" is ${tensor.type} [${tensor.dims.join(", ")}], ` +
      `expected ${entry.dtype} [${expected.join(", ")}] (only the ${count} new positions): ` +
      "is the manifest's appending_file really an appending graph?");
  }
}
