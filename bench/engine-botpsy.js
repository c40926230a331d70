// The bench's view of our runtime: web/runtime/model-client.js, exactly as the app uses it.
import {ModelClient} from "/web/runtime/model-client.js";

export function createBotpsyEngine() {
  let client = null;
  return {
    name: "botpsy",

    async clearCache(folderUrl) {
      client ??= new ModelClient();
      await client.deleteModel(folderUrl);
    },

    async load({folderUrl, backend, dtype}) {
      client ??= new ModelClient();
      const started = performance.now();
      const info = await client.load(folderUrl, {backend, dtype});
      return {
        loadMs: performance.now() - started,
        backend: info.backend, dtype: info.dtype, threads: info.threads, reason: info.reason,
      };
    },

    /** Greedy generation of exactly maxTokens tokens (EOS does not stop it); draftTokens as in generate's options. */
    async generate(promptIds, {maxTokens, reusePrefix, draftTokens}) {
      const tokens = [];
      let stats = null;
      let firstTokenAt = null;
      const started = performance.now();
      const stream = client.generate(promptIds, {
        maxTokens, temperature: 0, stopOnEos: false, reusePrefix, draftTokens, onStats: (s) => { stats = s; },
      });
      for await (const chunk of stream) {
        if (chunk.tokenId === null || chunk.tokenId === undefined) continue;
        firstTokenAt ??= performance.now();
        tokens.push(chunk.tokenId);
      }
      const totalMs = performance.now() - started;
      return {tokens, ttftMs: firstTokenAt - started, totalMs, reusedTokens: stats?.reusedTokens ?? 0,
              prefillMs: stats?.prefillMs ?? null, decodeMs: stats?.decodeMs ?? null,
              prefillPhaseMs: stats?.prefillPhaseMs ?? null, decodePhaseMs: stats?.decodePhaseMs ?? null,
              modelCalls: stats?.modelCalls ?? null, draftedTokens: stats?.draftedTokens ?? null,
              acceptedDraftTokens: stats?.acceptedDraftTokens ?? null};
    },

    async unload() {
      if (!client) return;
      await client.unload();
      client.terminate();
      client = null;
    },
  };
}
