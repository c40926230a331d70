// The sandbox's memory cap: a WebAssembly memory cannot grow past the maximum its module
// declares, and the browser enforces that (memory.grow fails, malloc returns NULL, Python
// raises MemoryError). Pyodide's module declares 4 GiB; this rewrites the number in a copy
// of the binary before it is compiled. The JavaScript heap a program can reach through
// Pyodide's `js` module has no such cap (the worker is terminated at the time limit).

const WASM_PAGE = 65536;
const MEMORY_SECTION = 5;

function readLeb(bytes, at) {
  let value = 0;
  let shift = 0;
  let byte;
  do {
    byte = bytes[at++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return {value, next: at};
}

/** `value` as an unsigned LEB128 of exactly `length` bytes (padding is valid LEB128). */
function writeLeb(bytes, at, length, value) {
  for (let i = 0; i < length; i += 1) {
    const low = value % 128;
    value = Math.floor(value / 128);
    bytes[at + i] = low | (i < length - 1 ? 0x80 : 0);
  }
  if (value !== 0) throw new Error("the memory cap does not fit in the module's encoding");
}

/**
 * A copy of the module `binary` whose one defined memory may grow to `maxBytes` at most
 * (rounded down to whole pages, never below its initial size). Throws when the module
 * has no memory with a maximum to rewrite.
 * @param {ArrayBuffer} binary @param {number} maxBytes @returns {ArrayBuffer}
 */
export function capWasmMemory(binary, maxBytes) {
  const bytes = new Uint8Array(binary.slice(0));
  let at = 8;  // magic + version
  while (at < bytes.length) {
    const id = bytes[at];
    const size = readLeb(bytes, at + 1);
    const body = size.next;
    if (id === MEMORY_SECTION) {
      const count = readLeb(bytes, body);
      const flags = bytes[count.next];
      if (count.value !== 1 || (flags & 1) === 0) throw new Error("the sandbox's module has no capped memory to rewrite");
      const initial = readLeb(bytes, count.next + 1);
      const maximum = readLeb(bytes, initial.next);
      const pages = Math.max(initial.value, Math.floor(maxBytes / WASM_PAGE));
      writeLeb(bytes, initial.next, maximum.next - initial.next, Math.min(pages, maximum.value));
      return bytes.buffer;
    }
    at = body + size.value;
  }
  throw new Error("the sandbox's module defines no memory");
}
