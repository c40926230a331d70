// A Hermes JSON call written without tags at the very start of a reply, as Qwen2.5-Coder
// writes them: the whole reply is {"name": ..., "arguments": {...}}, bare or in a ```json
// fence. The structural tag cannot hold it (its triggers fire anywhere in the text, and JSON
// later in a reply is prose), so the reply's start is watched instead, the way llama.cpp's
// lazy grammars work: the openings' automaton (json_reply.OPENING_STATES in
// py/botpsy_agent/parsing/, sent in the args) is walked over the text so far; once an opening
// and an offered tool's name with its closing quote are written, the caller hands the reply
// to a matcher of the call's own grammar, fed the reply's tokens from the first one.

/**
 * @typedef {object} UntaggedCallArgs
 * @property {Object<string, Object<string, string>>} [openings]  state -> {characters: next state}
 * @property {string} [start]      the automaton's first state
 * @property {string[]} [accepts]  states where an opening is complete (the name's opening quote written)
 * @property {string[]} [tools]    the offered tools' names
 * @property {string} [grammar]    EBNF of a reply that is one such call (toolCalls "auto")
 * @property {boolean} [forbid]    toolCalls "none": the reply is words; instead of the above:
 * @property {string} [refusedStarts]  characters the reply may not start with (an object, array, fence or tag)
 * @property {string} [whitespace]     characters skipped before the reply's first one
 */

/** Checks the args' shape; a bad one is an error naming what is wrong. */
export function checkUntaggedCallArgs(args) {
  const problem = (what) => new TypeError(`tool-call-grammar: args.untaggedCall.${what} (build the args with ` +
    "botpsy_agent.grammar.logits_processor_spec)");
  if (!args || typeof args !== "object") throw problem("is not an object");
  if (args.forbid) {
    if (typeof args.refusedStarts !== "string" || typeof args.whitespace !== "string") {
      throw problem("refusedStarts and whitespace must be strings with forbid");
    }
    return args;
  }
  if (!args.openings || typeof args.openings !== "object" || !(args.start in args.openings)) {
    throw problem("openings must be an automaton holding its start state");
  }
  if (!Array.isArray(args.accepts) || !Array.isArray(args.tools)) throw problem("accepts and tools must be arrays");
  if (typeof args.grammar !== "string") throw problem("grammar is missing (or set forbid)");
  return args;
}

/** Whether the reply so far is "call" (an opening and an offered name, closed; with forbid, a start
 * it may not have), "prose" or "undecided". */
export function classifyReplyStart(text, args) {
  if (args.forbid) {
    const first = [...text].find((char) => !args.whitespace.includes(char));
    if (first === undefined) return "undecided";
    return args.refusedStarts.includes(first) ? "call" : "prose";
  }
  const {openings, start, accepts, tools} = args;
  let state = start;
  let index = 0;
  for (; index < text.length && !accepts.includes(state); index++) {
    const next = Object.entries(openings[state]).find(([chars]) => chars.includes(text[index]));
    if (!next) return "prose";
    state = next[1];
  }
  if (!accepts.includes(state)) return "undecided";
  const close = text.indexOf('"', index);
  const name = text.slice(index, close < 0 ? text.length : close);
  if (name.includes("\\") || !tools.some((tool) => tool.startsWith(name))) return "prose";
  if (close < 0) return "undecided";
  return tools.includes(name) ? "call" : "prose";
}

/** The tokens of a reply's start and what they are so far. */
export class UntaggedCallWatch {
  constructor(args, tokenText) {
    this.args = args;
    this.tokenText = tokenText;  // token id -> its text
    this.tokens = [];
    this.pieces = [];
    this.status = "undecided";
  }

  get watching() {
    return this.status === "undecided";
  }

  /** Adds an accepted token; returns the new status. */
  push(tokenId) {
    this.tokens.push(tokenId);
    this.pieces.push(this.tokenText(tokenId));
    this.status = classifyReplyStart(this.pieces.join(""), this.args);
    return this.status;
  }

  /** Takes back the last push. */
  pop() {
    this.tokens.pop();
    this.pieces.pop();
    this.status = classifyReplyStart(this.pieces.join(""), this.args);
  }
}
