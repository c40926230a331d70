// xgrammar (@mlc-ai/web-xgrammar, WebAssembly) in the model worker: the library, one
// TokenizerInfo per loaded tokenizer, and compiled grammars cached by their text, so the
// same tools compile once (agent warm-up compiles them before the first token).
//
// The library is a UMD bundle: imported as a module it exports nothing and sets
// globalThis.xgrammar. It is loaded on first use only; generations without a grammar
// never pay for it. Its WebAssembly is embedded (no fetch): it works offline.

const LIBRARY_URL = new URL("../../../node_modules/@mlc-ai/web-xgrammar/lib/index.js", import.meta.url).href;
const MAX_COMPILED = 16;  // grammars kept compiled (a few tool sets x modes)

let library = null;
const engines = new WeakMap();  // TextTokenizer -> Promise<GrammarEngine>

async function loadLibrary() {
  library ??= import(LIBRARY_URL).then(() => {
    if (!globalThis.xgrammar?.GrammarCompiler) throw new Error(`${LIBRARY_URL} did not define xgrammar`);
    return globalThis.xgrammar;
  });
  return library;
}

/**
 * The grammar engine of one loaded model: its vocabulary (raw byte-level token strings,
 * never a decode that drops special tokens: an empty string would ban that token) and
 * its stop tokens, given explicitly (xgrammar's own guess misses <|im_end|>).
 */
export function grammarEngineFor(tokenizer, {vocabSize, stopTokenIds}) {
  let engine = engines.get(tokenizer);
  if (!engine) {
    engine = GrammarEngine.create(tokenizer, vocabSize, stopTokenIds);
    engines.set(tokenizer, engine);
    engine.catch(() => engines.delete(tokenizer));
  }
  return engine;
}

/** Frees the engine of a tokenizer (its WebAssembly memory: the vocabulary table, compiled grammars). */
export async function releaseGrammarEngine(tokenizer) {
  const engine = engines.get(tokenizer);
  if (!engine) return;
  engines.delete(tokenizer);
  (await engine.catch(() => null))?.dispose();
}

class GrammarEngine {
  static async create(tokenizer, vocabSize, stopTokenIds) {
    const xgr = await loadLibrary();
    const started = performance.now();
    const {tokens, vocabType} = tokenizer.rawTokenTable(vocabSize);
    const info = await xgr.TokenizerInfo.createTokenizerInfo(tokens, vocabType, false, vocabSize, stopTokenIds);
    const compiler = await xgr.GrammarCompiler.createGrammarCompiler(info, true);
    return new GrammarEngine(xgr, info, compiler, stopTokenIds, performance.now() - started);
  }

  constructor(xgr, info, compiler, stopTokenIds, setupMs) {
    this.xgr = xgr;
    this.info = info;
    this.compiler = compiler;
    this.stopTokenIds = stopTokenIds;
    this.setupMs = setupMs;
    this.vocabSize = info.getVocabSize();
    this.compiled = new Map();  // structural tag JSON -> Promise<CompiledGrammar>, oldest first
  }

  /** The compiled grammar of a structural tag (JSON text), and how long compiling took (0: cached). */
  async compileStructuralTag(tagJson) {
    let entry = this.compiled.get(tagJson);
    if (entry) {
      this.compiled.delete(tagJson);  // most recently used last
      this.compiled.set(tagJson, entry);
      return {compiled: await entry.compiled, compileMs: 0};
    }
    const started = performance.now();
    entry = {compiled: this.compiler.compileStructuralTag(tagJson)};
    this.compiled.set(tagJson, entry);
    try {
      const compiled = await entry.compiled;
      this.#evict();
      return {compiled, compileMs: performance.now() - started};
    } catch (error) {
      this.compiled.delete(tagJson);
      throw new Error(`the tool-call grammar does not compile: ${error?.message ?? error}`);
    }
  }

  /** A matcher that ends on one of the model's stop tokens. The caller disposes it. */
  createMatcher(compiled) {
    return this.xgr.GrammarMatcher.createGrammarMatcher(compiled, this.stopTokenIds);
  }

  dispose() {
    for (const entry of this.compiled.values()) entry.compiled.then((compiled) => compiled.dispose(), () => {});
    this.compiled.clear();
    this.compiler.dispose();
    this.info.dispose();
  }

  #evict() {
    while (this.compiled.size > MAX_COMPILED) {
      const [oldest, entry] = this.compiled.entries().next().value;
      this.compiled.delete(oldest);
      // A matcher made from it keeps its own reference inside the library.
      entry.compiled.then((compiled) => compiled.dispose(), () => {});
    }
  }
}
