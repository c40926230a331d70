// The folder's tokenizer (tokenizer.json + tokenizer_config.json) through
// @huggingface/tokenizers, plus streaming detokenization.
import {Tokenizer} from "../../../node_modules/@huggingface/tokenizers/dist/tokenizers.min.mjs";

export class TextTokenizer {
  constructor(tokenizerJson, tokenizerConfig) {
    this.inner = new Tokenizer(tokenizerJson, tokenizerConfig ?? {});
    // Kept for rawTokenTable (a grammar's token table); the rest of the JSON is let go.
    this.raw = {vocab: tokenizerJson.model?.vocab ?? {}, added: tokenizerJson.added_tokens ?? [],
                decoder: tokenizerJson.decoder ?? null};
  }

  static fromBytes(tokenizerBytes, configBytes) {
    const decoder = new TextDecoder();
    const tokenizerJson = JSON.parse(decoder.decode(tokenizerBytes));
    const config = configBytes ? JSON.parse(decoder.decode(configBytes)) : {};
    return new TextTokenizer(tokenizerJson, config);
  }

  /** Prompt text is tokenized as written: a rendered chat template already holds its special tokens. */
  encode(text) {
    if (typeof text !== "string") throw new TypeError(`tokenize expects a string, got ${typeof text}`);
    return this.inner.encode(text, {add_special_tokens: false}).ids;
  }

  /**
   * Every token id's own string as tokenizer.json spells it (byte-level symbols as they are,
   * special tokens included; "" for ids the tokenizer lacks, e.g. vocabulary padding), and
   * how those strings encode bytes ("byte_level", "byte_fallback" or "raw"): what a grammar
   * engine needs to know which text each token writes.
   */
  rawTokenTable(size) {
    const tokens = new Array(size).fill("");
    const place = (text, id) => { if (Number.isInteger(id) && id >= 0 && id < size) tokens[id] = text; };
    if (Array.isArray(this.raw.vocab)) this.raw.vocab.forEach((entry, id) => place(Array.isArray(entry) ? entry[0] : entry, id));
    else for (const [text, id] of Object.entries(this.raw.vocab)) place(text, id);
    for (const {id, content} of this.raw.added) place(content, id);
    return {tokens, vocabType: vocabTypeOf(this.raw.decoder)};
  }

  decode(ids) {
    if (!ids.length) return "";
    return this.inner.decode(ids, {skip_special_tokens: false, clean_up_tokenization_spaces: false});
  }
}

function vocabTypeOf(decoder) {
  const kinds = decoder?.type === "Sequence" ? (decoder.decoders ?? []).map((d) => d.type) : [decoder?.type];
  if (kinds.includes("ByteLevel")) return "byte_level";
  if (kinds.includes("ByteFallback")) return "byte_fallback";
  return "raw";
}

const REPLACEMENT_CHARACTER = "\uFFFD";

/**
 * Turns a stream of token ids into text pieces. A byte-level token can end in
 * the middle of a UTF-8 character; the decoder then shows U+FFFD, so such a
 * piece is held back until the following tokens complete it. Decoding a short
 * window of recent tokens (not the whole output) keeps each step cheap while
 * letting merges such as leading-space handling see their left context.
 */
export class StreamingDetokenizer {
  constructor(tokenizer) {
    this.tokenizer = tokenizer;
    this.ids = [];
    this.windowStart = 0;   // first id of the decoding window
    this.emittedFrom = 0;   // ids before this are fully emitted
  }

  /** Adds one token id; returns the new text it completes ("" while a character is incomplete). */
  push(tokenId) {
    this.ids.push(tokenId);
    const context = this.tokenizer.decode(this.ids.slice(this.windowStart, this.emittedFrom));
    const full = this.tokenizer.decode(this.ids.slice(this.windowStart));
    if (full.length <= context.length || full.endsWith(REPLACEMENT_CHARACTER)) return "";
    const piece = full.slice(context.length);
    this.windowStart = this.emittedFrom;
    this.emittedFrom = this.ids.length;
    return piece;
  }

  /** Whatever is still held back (an incomplete character at the end of the stream). */
  flush() {
    if (this.emittedFrom >= this.ids.length) return "";
    const context = this.tokenizer.decode(this.ids.slice(this.windowStart, this.emittedFrom));
    const full = this.tokenizer.decode(this.ids.slice(this.windowStart));
    this.windowStart = this.emittedFrom = this.ids.length;
    return full.slice(context.length);
  }
}
