// The model state for "appending" graphs (WASM; docs/contracts.md section 1):
// the graph returns only the new KV positions instead of past + new, so no
// full copy of the cache comes out of the graph (and is allocated in JS) each
// step. Each KV cache lives in one buffer with spare room; the live positions
// are kept packed exactly as the standard graph's past input ([rows, length,
// inner], rows = the dims before seq_axis), and a view of them is fed. The
// graph therefore computes exactly what the standard graph computes from the
// same past: same tokens, same logits, bit for bit, and a prompt split across
// calls gives what it gives in one call.
// Appending moves each row up to make room (an in-place memmove inside the
// buffer, no allocation); truncating moves them down. Conv and recurrent state
// are replaced whole each step, as in CacheState.
//
// Snapshots share the KV buffers instead of copying them; since appending and
// truncating move data, a write to buffers a held snapshot reads first moves
// the live state to a copy (copy-on-write).
// Same interface as CacheState (cache-state.js); the runner picks the class.
import {TRUNCATABLE_KINDS, TYPED_ARRAYS} from "./cache-state.js";

// Room grows in steps of this many positions: growing copies the cache once
// (every ~64 tokens); the room itself costs nothing per step (only the live
// positions are fed).
export const CAPACITY_STEP = 64;

/** The room (in positions) that holds `needed` positions. */
export function capacityFor(needed) {
  return Math.ceil(needed / CAPACITY_STEP) * CAPACITY_STEP;
}

const product = (dims) => dims.reduce((a, b) => a * b, 1);

/** How an entry's data is laid out: `rows` blocks of length x `inner` values. */
function layoutOf(entry) {
  return {rows: product(entry.shape.slice(0, entry.seq_axis)), inner: product(entry.shape.slice(entry.seq_axis + 1))};
}

/** The same bytes as `ArrayType` (onnxruntime-web may hand float16 back as Float16Array; we keep raw bits). */
function asArrayType(data, ArrayType) {
  if (data instanceof ArrayType) return data;
  return new ArrayType(data.buffer, data.byteOffset, data.byteLength / ArrayType.BYTES_PER_ELEMENT);
}

/** One buffer per KV entry, each with room for `capacity` positions, and the snapshots that read them. */
class KvBuffers {
  constructor(entries, capacity) {
    this.capacity = capacity;
    this.arrays = new Map(entries.map((entry) => {
      const {rows, inner} = layoutOf(entry);
      return [entry.input, new TYPED_ARRAYS[entry.dtype](rows * capacity * inner)];
    }));
    this.snapshots = new Set();
  }

  /** New buffers with room for `capacity` positions, holding the packed [rows, length, inner] of these. */
  copy(entries, length, capacity) {
    const copy = new KvBuffers(entries, capacity);
    for (const entry of entries) {
      const {rows, inner} = layoutOf(entry);
      copy.arrays.get(entry.input).set(this.arrays.get(entry.input).subarray(0, rows * length * inner));
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

  /** Positions the KV buffers have room for (reported in stats); only the processed ones are fed. */
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

  /** The feeds for session.run: a packed view of each KV buffer's live positions, and the fixed-size state. */
  feeds() {
    const feeds = Object.fromEntries(this.fixed);
    for (const entry of this.kvEntries) {
      const {rows, inner} = layoutOf(entry);
      const dims = [...entry.shape];
      dims[entry.seq_axis] = this.length;
      const live = this.kv.arrays.get(entry.input).subarray(0, rows * this.length * inner);
      feeds[entry.input] = new this.ort.Tensor(entry.dtype, live, dims);
    }
    return feeds;
  }

  /** Appends the graph's new KV positions after the live ones; takes its conv/recurrent state. */
  adoptOutputs(outputs, length) {
    const old = this.length;
    const count = length - old;
    for (const entry of this.entries) {
      if (!outputs[entry.output]) throw new Error(`the graph did not return cache output "${entry.output}"`);
    }
    for (const entry of this.kvEntries) checkNewPositions(entry, outputs[entry.output], count);
    this.#makeWritable(length);
    for (const entry of this.kvEntries) {
      const {rows, inner} = layoutOf(entry);
      const added = asArrayType(outputs[entry.output].data, TYPED_ARRAYS[entry.dtype]);
      const buffer = this.kv.arrays.get(entry.input);
      // Last row first: each row moves up by `count` positions per row before it.
      for (let row = rows - 1; row >= 0; row--) {
        if (row > 0) buffer.copyWithin(row * length * inner, row * old * inner, (row + 1) * old * inner);
        buffer.set(added.subarray(row * count * inner, (row + 1) * count * inner), (row * length + old) * inner);
      }
      outputs[entry.output].dispose?.();
    }
    for (const entry of this.fixedEntries) {
      this.refs.release(this.fixed.get(entry.input));
      this.fixed.set(entry.input, this.refs.hold(outputs[entry.output]));
    }
    this.length = length;
  }

  // Before moving data in the buffers so that they hold `needed` positions: a copy when
  // a snapshot still reads them (copy-on-write), when they are too small (growth), or
  // when a reset or cut-back left much more room than needed (memory held for nothing).
  #makeWritable(needed) {
    const {capacity} = this.kv;
    const resize = needed > capacity || capacity > capacityFor(needed) + CAPACITY_STEP;
    if (!resize && this.kv.snapshots.size === 0) return;
    this.kv = this.kv.copy(this.kvEntries, this.length, resize ? capacityFor(needed) : capacity);
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

  /**
   * The state's bytes for storing it (prompt-state.js): {length, tensors: [{input, dims, bytes}]} in
   * graph order, KV packed as the graph's past input. The bytes are views: copy them before the next step.
   */
  async exportState() {
    const tensors = [];
    for (const entry of this.entries) {
      let data;
      const dims = [...entry.shape];
      if (TRUNCATABLE_KINDS.has(entry.kind)) {
        const {rows, inner} = layoutOf(entry);
        dims[entry.seq_axis] = this.length;
        data = this.kv.arrays.get(entry.input).subarray(0, rows * this.length * inner);
      } else {
        data = this.fixed.get(entry.input).data;
      }
      tensors.push({input: entry.input, dims, bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength)});
    }
    return {length: this.length, tensors};
  }

  /** Makes a stored state (exportState's shape, dims already checked) the live state; the bytes are copied. */
  importState({length, tensors}) {
    const byInput = new Map(tensors.map((tensor) => [tensor.input, tensor]));
    // A step of room beyond the state: the message that follows a restored prefix fits without a regrow copy.
    const kv = new KvBuffers(this.kvEntries, capacityFor(length) + CAPACITY_STEP);
    for (const entry of this.kvEntries) {
      const target = kv.arrays.get(entry.input);
      new Uint8Array(target.buffer, target.byteOffset, target.byteLength).set(byInput.get(entry.input).bytes);
    }
    const fixed = new Map(this.fixedEntries.map((entry) => {
      const data = new TYPED_ARRAYS[entry.dtype](byInput.get(entry.input).bytes.slice().buffer);
      return [entry.input, this.refs.hold(new this.ort.Tensor(entry.dtype, data, entry.shape))];
    }));
    this.refs.releaseAll(this.fixed.values());
    this.fixed = fixed;
    this.kv = kv;
    this.length = length;
  }

  /** Forgets every position from `length` on (KV-only models): rows move down, in place. */
  async truncate(length) {
    if (!this.truncatable) throw new Error("this model has recurrent or conv state, which cannot be truncated");
    this.#cutKv(length);
  }

  /**
   * The state now, for rewind() after positions were only added: its length and conv/recurrent
   * tensors. Cheaper than a snapshot: the KV buffers are not shared (no copy on the next write).
   */
  checkpoint() {
    for (const tensor of this.fixed.values()) this.refs.hold(tensor);
    return {length: this.length, fixed: new Map(this.fixed)};
  }

  /** Back to a checkpoint: KV cut back to its length, its conv/recurrent state made live. */
  rewind(checkpoint) {
    if (checkpoint.length > this.length) throw new Error("rewind: the state is shorter than the checkpoint");
    this.#cutKv(checkpoint.length);
    for (const tensor of checkpoint.fixed.values()) this.refs.hold(tensor);
    this.refs.releaseAll(this.fixed.values());
    this.fixed = new Map(checkpoint.fixed);
  }

  releaseCheckpoint(checkpoint) {
    this.refs.releaseAll(checkpoint.fixed.values());
  }

  #cutKv(length) {
    if (length >= this.length) return;
    if (this.kv.snapshots.size) this.kv = this.kv.copy(this.kvEntries, this.length, this.kv.capacity);
    for (const entry of this.kvEntries) {
      const {rows, inner} = layoutOf(entry);
      const buffer = this.kv.arrays.get(entry.input);
      for (let row = 1; row < rows; row++) {
        buffer.copyWithin(row * length * inner, row * this.length * inner, (row * this.length + length) * inner);
      }
    }
    this.length = length;
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
