// SHA-256 of model files and stored states: crypto.subtle when it exists and accepts the buffer,
// else the portable incremental implementation below. It runs where crypto.subtle is missing
// (an insecure origin: plain http from a LAN address, not localhost) and for files over
// SUBTLE_DIGEST_MAX_BYTES, which crypto.subtle refuses (an fp32 0.5B model's weights are 2.5 GB).

// crypto.subtle.digest takes the whole message in one buffer, and Chromium 156 throws a RangeError
// ("size exceeds the supported range") for buffers from somewhere past 1.5 GiB (measured here:
// 1.5 GiB accepted, 2 GiB - 4 KiB refused; the spec names no limit, other browsers may differ).
// 1 GiB keeps a wide margin and still hands every quantized model we ship to the fast native path.
export const SUBTLE_DIGEST_MAX_BYTES = 2 ** 30;

// The portable path hashes a large buffer a chunk at a time and yields between chunks, so a worker
// still answers messages (progress, abort) during a check that takes tens of seconds.
const PORTABLE_CHUNK_BYTES = 16 * 2 ** 20;

/** Lower-case hex SHA-256 of the bytes of an ArrayBuffer or a view (typed array, DataView) of any size. */
export async function sha256Hex(bytes) {
  const view = ArrayBuffer.isView(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : new Uint8Array(bytes);
  const subtle = globalThis.crypto?.subtle;
  if (subtle && view.byteLength <= SUBTLE_DIGEST_MAX_BYTES) {
    return toHex(new Uint8Array(await subtle.digest("SHA-256", view)));
  }
  const hash = new Sha256();
  for (let at = 0; at < view.byteLength; at += PORTABLE_CHUNK_BYTES) {
    hash.update(view.subarray(at, at + PORTABLE_CHUNK_BYTES));
    if (at + PORTABLE_CHUNK_BYTES < view.byteLength) await new Promise((resolve) => setTimeout(resolve, 0));
  }
  return hash.digestHex();
}

/** Plain-JS SHA-256 of a whole Uint8Array in one call (FIPS 180-4). */
export function sha256HexPortable(bytes) {
  return new Sha256().update(bytes).digestHex();
}

// Int32Array (same bits as the standard's unsigned words): the rounds stay in 32-bit integer arithmetic.
const ROUND_CONSTANTS = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

const BLOCK_BYTES = 64;

/**
 * Incremental SHA-256 (FIPS 180-4): update(bytes) any number of times with consecutive pieces of
 * the message, then digestHex() once. Pieces may have any length; a partial block is kept until
 * the next piece completes it.
 */
export class Sha256 {
  #state = new Int32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  #words = new Int32Array(64);  // the message schedule
  #pending = new Uint8Array(BLOCK_BYTES);  // the start of a block the pieces so far did not complete
  #pendingLength = 0;
  #messageLength = 0;  // bytes; a double counts exactly up to 2^53, far past any file
  #finished = false;

  update(bytes) {
    if (this.#finished) throw new Error("Sha256.update after digestHex: start a new Sha256");
    if (!(bytes instanceof Uint8Array)) {
      const kind = bytes === null ? "null" : typeof bytes === "object" ? bytes.constructor?.name ?? "object" : typeof bytes;
      throw new TypeError(`Sha256.update takes a Uint8Array, got ${kind}`);
    }
    this.#messageLength += bytes.length;
    let at = 0;
    if (this.#pendingLength > 0) {
      at = Math.min(BLOCK_BYTES - this.#pendingLength, bytes.length);
      this.#pending.set(bytes.subarray(0, at), this.#pendingLength);
      this.#pendingLength += at;
      if (this.#pendingLength < BLOCK_BYTES) return this;
      compressBlocks(this.#state, this.#words, this.#pending, 0, BLOCK_BYTES);
      this.#pendingLength = 0;
    }
    const wholeEnd = at + Math.floor((bytes.length - at) / BLOCK_BYTES) * BLOCK_BYTES;
    compressBlocks(this.#state, this.#words, bytes, at, wholeEnd);
    this.#pending.set(bytes.subarray(wholeEnd));
    this.#pendingLength = bytes.length - wholeEnd;
    return this;
  }

  digestHex() {
    if (this.#finished) throw new Error("Sha256.digestHex called twice: start a new Sha256");
    this.#finished = true;
    // Padding: 0x80, zeros, then the message length in bits as a 64-bit big-endian number.
    const rest = this.#pendingLength;
    const tail = new Uint8Array(rest < 56 ? BLOCK_BYTES : 2 * BLOCK_BYTES);
    tail.set(this.#pending.subarray(0, rest));
    tail[rest] = 0x80;
    const bitLength = this.#messageLength * 8;
    const view = new DataView(tail.buffer);
    view.setUint32(tail.length - 8, Math.floor(bitLength / 2 ** 32));
    view.setUint32(tail.length - 4, bitLength >>> 0);
    compressBlocks(this.#state, this.#words, tail, 0, tail.length);
    const digest = new Uint8Array(32);
    const digestView = new DataView(digest.buffer);
    this.#state.forEach((value, index) => digestView.setInt32(index * 4, value));
    return toHex(digest);
  }
}

/** Compresses the whole blocks bytes[start, end) into state (end - start is a multiple of 64). */
function compressBlocks(state, words, bytes, start, end) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let offset = start; offset < end; offset += BLOCK_BYTES) {
    for (let i = 0; i < 16; i++) words[i] = view.getInt32(offset + i * 4);  // big-endian words
    compressBlock(state, words);
  }
}

// One block, its 16 words already in words[0..15]. A function of its own and the majority and
// choice functions in their two-operation forms: about 1.4x faster in V8 than one long loop.
function compressBlock(state, words) {
  const K = ROUND_CONSTANTS;
  for (let i = 16; i < 64; i++) {
    const w15 = words[i - 15];
    const w2 = words[i - 2];
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    words[i] = (words[i - 16] + s0 + words[i - 7] + s1) | 0;
  }
  let a = state[0], b = state[1], c = state[2], d = state[3];
  let e = state[4], f = state[5], g = state[6], h = state[7];
  for (let i = 0; i < 64; i++) {
    const sum1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const choice = g ^ (e & (f ^ g));
    const temp1 = (h + sum1 + choice + K[i] + words[i]) | 0;
    const sum0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const majority = (a & b) | (c & (a | b));
    const temp2 = (sum0 + majority) | 0;
    h = g; g = f; f = e; e = (d + temp1) | 0;
    d = c; c = b; b = a; a = (temp1 + temp2) | 0;
  }
  state[0] = (state[0] + a) | 0; state[1] = (state[1] + b) | 0; state[2] = (state[2] + c) | 0; state[3] = (state[3] + d) | 0;
  state[4] = (state[4] + e) | 0; state[5] = (state[5] + f) | 0; state[6] = (state[6] + g) | 0; state[7] = (state[7] + h) | 0;
}

function toHex(bytes) {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
