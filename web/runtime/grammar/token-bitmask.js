// Applying xgrammar's token bitmask to a logits vector: bit i of the Int32Array set =
// token i allowed. Two ways, chosen by how much the mask allows: in free text nearly every
// word is all ones and is skipped; inside a call nearly every token is banned, and it is
// cheaper to keep the few allowed logits, fill the whole vector with -Infinity and put
// them back than to ban 250k tokens one by one.

/** Sets the logit of every token the mask does not allow to -Infinity (in place). */
export function applyTokenBitmask(logits, mask) {
  const size = logits.length;
  const words = Math.min(mask.length, Math.ceil(size / 32));
  let fullWords = 0;
  for (let word = 0; word < words; word++) if (mask[word] === -1) fullWords++;
  if (fullWords * 2 >= words) banOneByOne(logits, mask, words);
  else keepAllowedOnly(logits, mask, words);
}

function banOneByOne(logits, mask, words) {
  const size = logits.length;
  for (let word = 0; word < words; word++) {
    const bits = mask[word];
    if (bits === -1) continue;
    const base = word * 32;
    const end = Math.min(32, size - base);
    for (let bit = 0; bit < end; bit++) {
      if ((bits & (1 << bit)) === 0) logits[base + bit] = -Infinity;
    }
  }
  logits.fill(-Infinity, words * 32);  // past the grammar's vocabulary
}

function keepAllowedOnly(logits, mask, words) {
  const size = logits.length;
  const ids = [];
  const values = [];
  for (let word = 0; word < words; word++) {
    let bits = mask[word];
    while (bits !== 0) {
      const bit = 31 - Math.clz32(bits & -bits);  // lowest set bit
      const id = word * 32 + bit;
      if (id < size) { ids.push(id); values.push(logits[id]); }
      bits &= bits - 1;
    }
  }
  logits.fill(-Infinity);
  for (let i = 0; i < ids.length; i++) logits[ids[i]] = values[i];
}

/** How many tokens the mask allows (for tests and diagnostics). */
export function countAllowed(mask, size) {
  let allowed = 0;
  for (let id = 0; id < size; id++) if (mask[id >>> 5] & (1 << (id & 31))) allowed++;
  return allowed;
}
