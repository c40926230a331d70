// The "returning visitor" scenario of `botpsy-web bench` (py/botpsy_web/bench_returning_visitor.py):
// one visit as the app makes it on a page load. The model loads (from the cache), the agent's
// warm-up prefill (persist, as AgentHost.warmUp() before the first message) starts at ready, and
// the person's first message is sent at once: the time to its first token is what they wait.
// Each visit gets its own model worker, as a reloaded page does; stored files stay.
import {ModelClient} from "/web/runtime/model-client.js";
import {listDerived, removeDerived} from "/web/runtime/storage/model-files.js";
import {MODEL_CACHE_NAME} from "/web/runtime/storage/cache-api.js";
import {SHIPPED_DIRECTORY, SHIPPED_INDEX} from "/web/runtime/state/shipped-prompt-state.js";

/** Removes the folder's stored prompt states (the model files stay): the next visit has none. */
export async function forgetPromptStates(folderUrl) {
  const folder = new URL(folderUrl, location.href).href;
  for (const {path} of await listDerived(folder)) await removeDerived(folder, path);
}

/** Removes the folder's shipped prompt state and its index from the store: the next visit downloads them, as a first one. */
export async function forgetShippedStates(folderUrl) {
  const folder = new URL(folderUrl, location.href).href;
  const cache = await caches.open(MODEL_CACHE_NAME);
  for (const request of await cache.keys()) {
    if (request.url === folder + SHIPPED_INDEX || request.url.startsWith(folder + SHIPPED_DIRECTORY)) await cache.delete(request);
  }
}

/**
 * One visit: {loadMs, firstTokenMs (from ready), tokens, warmUp (prefill's answer), answerPrefillMs (the
 * answer's own prompt: what follows the warm-up prefix), stateBytes, backend, dtype}.
 */
export async function visit({folderUrl, backend, dtype, prefixIds, promptIds, maxTokens}) {
  const client = new ModelClient();
  try {
    const started = performance.now();
    const info = await client.load(folderUrl, {backend, dtype});
    const ready = performance.now();
    const warmUp = client.prefill(prefixIds, {persist: true});
    const tokens = [];
    let firstTokenAt = null;
    let stats = null;
    const options = {maxTokens, temperature: 0, stopOnEos: false, onStats: (s) => { stats = s; }};
    for await (const chunk of client.generate(promptIds, options)) {
      if (chunk.tokenId === null || chunk.tokenId === undefined) continue;
      firstTokenAt ??= performance.now();
      tokens.push(chunk.tokenId);
    }
    const warmed = await warmUp;
    const usage = await client.storageUsage();  // waits for the state's write to finish
    const folder = new URL(folderUrl, location.href).href;
    const stored = usage.models.find((model) => model.folderUrl === folder);
    return {loadMs: ready - started, firstTokenMs: firstTokenAt - ready, tokens, warmUp: warmed,
            answerPrefillMs: stats?.prefillMs ?? null, answerPrefillPhaseMs: stats?.prefillPhaseMs ?? null,
            answerModelMs: stats?.modelMs ?? null, stateBytes: stored?.derivedBytes ?? 0, backend: info.backend, dtype: info.dtype};
  } finally {
    await client.unload().catch(() => {});
    client.terminate();
  }
}
