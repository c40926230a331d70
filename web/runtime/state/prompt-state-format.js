// The bytes of a stored prompt state (prompt-state.js keeps them in the model-files store):
//
//   "BOTPSYPS"   8 bytes: what the file is
//   sha256       32 bytes: of everything after it, so a truncated or corrupted file is caught
//   u32 LE       H, the header's length
//   header       H bytes of JSON: {version, identity, tokenCount, tokensSha256, tensors: [{input, dims, byteLength}]}
//   then, each starting at a multiple of 8: the token ids (int32 LE), and each cache tensor's
//   raw bytes in the manifest's order (KV packed as the graph's past input).
//
// `identity` names what computed the state (model files' hashes, dtype, graph kind, backend,
// threads, onnxruntime version): a state is used only by exactly the same, because only then
// does it give the bits a fresh prefill gives.
import {TYPED_ARRAYS} from "./cache-state.js";
import {sha256Hex} from "../storage/sha256.js";

const MAGIC = new TextEncoder().encode("BOTPSYPS");
const CHECKSUM_AT = MAGIC.length;
const BODY_AT = CHECKSUM_AT + 32;
export const FORMAT_VERSION = 1;

/** A stored state that must not be used; `reason` says why in words. */
export class PromptStateMismatch extends Error {
  constructor(reason) {
    super(`the stored prompt state ${reason}`);
    this.name = "PromptStateMismatch";
  }
}

/** JSON with sorted keys: the same identity always gives the same text (and hash). */
export function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

const align8 = (offset) => Math.ceil(offset / 8) * 8;

/** The SHA-256 a state's header names its token ids by: over the ids as int32 LE. */
export function tokensSha256(ids) {
  return sha256Hex(idsBytes(ids));
}

function idsBytes(ids) {
  const bytes = new Uint8Array(ids.length * 4);
  const view = new DataView(bytes.buffer);
  ids.forEach((id, i) => view.setInt32(i * 4, id, true));
  return bytes;
}

/**
 * The file's bytes, its checksum still zero: everything is copied into them, so the live cache
 * may change as soon as this resolves (not before). sealPromptState() then fills in the checksum.
 * `state`: a cache's exportState() ({length, tensors: [{input, dims, bytes}]}).
 */
export async function encodePromptState({identity, ids, state}) {
  const idBytes = idsBytes(ids);
  const header = new TextEncoder().encode(JSON.stringify({
    version: FORMAT_VERSION,
    identity,
    tokenCount: ids.length,
    tokensSha256: await sha256Hex(idBytes),
    tensors: state.tensors.map(({input, dims, bytes}) => ({input, dims, byteLength: bytes.byteLength})),
  }));
  const parts = [idBytes, ...state.tensors.map((tensor) => tensor.bytes)];
  let offset = align8(BODY_AT + 4 + header.byteLength);
  const offsets = parts.map((part) => { const at = offset; offset = align8(at + part.byteLength); return at; });
  const file = new Uint8Array(offset);
  file.set(MAGIC, 0);
  new DataView(file.buffer).setUint32(BODY_AT, header.byteLength, true);
  file.set(header, BODY_AT + 4);
  parts.forEach((part, i) => file.set(part, offsets[i]));
  return file;
}

/** Writes the checksum of encodePromptState's bytes into them. */
export async function sealPromptState(file) {
  file.set(hexBytes(await sha256Hex(file.subarray(BODY_AT))), CHECKSUM_AT);
  return file;
}

function hexBytes(hex) {
  return Uint8Array.from(hex.match(/../g), (pair) => parseInt(pair, 16));
}

function readHeader(file) {
  const headerLength = new DataView(file.buffer, file.byteOffset, file.byteLength).getUint32(BODY_AT, true);
  try {
    return JSON.parse(new TextDecoder().decode(file.subarray(BODY_AT + 4, BODY_AT + 4 + headerLength)));
  } catch (error) {
    throw new PromptStateMismatch(`has an unreadable header (${error.message})`);
  }
}

/**
 * The header of a file (its checksum checked): {version, identity, tokenCount, tokensSha256, tensors}.
 * For describing a state (the shipped states' index); decodePromptState checks it before use.
 */
export async function readPromptStateHeader(file) {
  await checkIntact(file);
  return readHeader(file);
}

async function checkIntact(file) {
  if (!(file instanceof Uint8Array) || file.byteLength < BODY_AT + 4) throw new PromptStateMismatch("is truncated");
  if (MAGIC.some((byte, i) => file[i] !== byte)) throw new PromptStateMismatch("is not a prompt state file");
  const expected = Array.from(file.subarray(CHECKSUM_AT, BODY_AT), (b) => b.toString(16).padStart(2, "0")).join("");
  if (await sha256Hex(file.subarray(BODY_AT)) !== expected) {
    throw new PromptStateMismatch("failed its checksum: it is truncated or corrupted");
  }
}

/**
 * Checks a stored file and returns {ids, state} (state as importState takes it, its bytes views
 * of `file`), or throws PromptStateMismatch when it is damaged or was made by anything else than
 * `identity` with these cache `entries` (from describeCache).
 */
export async function decodePromptState(file, {identity, entries}) {
  await checkIntact(file);
  const header = readHeader(file);
  const headerLength = new DataView(file.buffer, file.byteOffset, file.byteLength).getUint32(BODY_AT, true);
  if (header.version !== FORMAT_VERSION) throw new PromptStateMismatch(`has format version ${header.version}, not ${FORMAT_VERSION}`);
  if (canonicalJson(header.identity) !== canonicalJson(identity)) {
    const differing = Object.keys(identity).filter((key) => canonicalJson(header.identity?.[key]) !== canonicalJson(identity[key]));
    throw new PromptStateMismatch(`was made by another model setup (differs in: ${differing.join(", ") || "its identity"})`);
  }
  const tokenCount = header.tokenCount;
  if (!Number.isInteger(tokenCount) || tokenCount < 1) throw new PromptStateMismatch("covers no tokens");
  const described = Array.isArray(header.tensors) ? header.tensors : [];
  if (described.length !== entries.length) throw new PromptStateMismatch(`holds ${described.length} tensors, the model has ${entries.length}`);

  let offset = align8(BODY_AT + 4 + headerLength);
  const take = (byteLength) => {
    if (offset + byteLength > file.byteLength) throw new PromptStateMismatch("is shorter than its header says");
    const bytes = file.subarray(offset, offset + byteLength);
    offset = align8(offset + byteLength);
    return bytes;
  };
  const idBytes = take(tokenCount * 4);
  if (await sha256Hex(idBytes) !== header.tokensSha256) throw new PromptStateMismatch("has token ids that do not match their hash");
  const idView = new DataView(idBytes.buffer, idBytes.byteOffset, idBytes.byteLength);
  const ids = Array.from({length: tokenCount}, (_, i) => idView.getInt32(i * 4, true));

  const tensors = entries.map((entry, i) => {
    const stored = described[i];
    const dims = [...entry.shape];
    if (entry.seq_axis !== null && entry.seq_axis !== undefined) dims[entry.seq_axis] = tokenCount;
    const byteLength = dims.reduce((a, b) => a * b, 1) * TYPED_ARRAYS[entry.dtype].BYTES_PER_ELEMENT;
    if (stored?.input !== entry.input || canonicalJson(stored.dims) !== canonicalJson(dims) || stored.byteLength !== byteLength) {
      throw new PromptStateMismatch(`does not hold "${entry.input}" as [${dims.join(", ")}] ${entry.dtype}`);
    }
    return {input: entry.input, dims, bytes: take(byteLength)};
  });
  return {ids, state: {length: tokenCount, tensors}};
}
