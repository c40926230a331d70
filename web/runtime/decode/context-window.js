// The model's context window: the manifest's `context_length`, the positions the model was
// trained for. A prompt that does not fit is refused before any work, with its length in the
// message; a generation that reaches the end of the window stops there (stop reason
// "context_full") instead of running the model past what it can read, or out of memory.
// A folder exported before manifests recorded it has no limit here.

/** The window in tokens, or null when the manifest does not say. */
export function contextLength(manifest) {
  const length = manifest.context_length;
  if (length === undefined || length === null) return null;
  if (!Number.isInteger(length) || length < 2) {
    throw new RangeError(`manifest.context_length must be an integer >= 2, got ${JSON.stringify(length)}`);
  }
  return length;
}

/** Throws when a prompt of `promptLength` tokens leaves no room for one generated token. */
export function checkPromptFits(promptLength, manifest) {
  const length = contextLength(manifest);
  if (length !== null && promptLength >= length) {
    throw new RangeError(`the prompt is ${promptLength} tokens and this model reads at most ${length} ` +
                         "(manifest context_length): start a new conversation or shorten this one");
  }
}

/** Whether the window has room for another token after `used` (prompt + generated). */
export function hasRoom(used, manifest) {
  const length = contextLength(manifest);
  return length === null || used < length;
}
