// Where a reply decides on a tool call or writes one, for args.greedyCalls of the
// "tool-call-grammar" processor: there the token is picked greedily whatever the temperature,
// so sampling (the page's 0.7) varies the words a person reads and never which tool is called
// or with what arguments. A small model's second-best token at those places is an invented
// tool, a wrong date or an extra call (bench/RESULTS.md, issue 41).
//
// The call tags come from the processor's own structural tag (xgrammar's "triggered_tags":
// each tag's begin and end), so nothing here knows a model's format. A tag is open from its
// begin to its end in the reply's text; the reply's first token is where it decides between
// words and a call, and so is every token while the text ends with part of a begin (a
// tokenizer without a <tool_call> token spells it "<", "tool", "_call>" or "<", "t", "ool"...:
// sampled, each spelling would lead the call elsewhere).

/** @typedef {{begin: string, end: string}} CallTag */

/** The call tags of a structural tag: [] when it lets no call open (toolCalls "none"). */
export function callTagsOf(structuralTag) {
  const format = structuralTag?.format;
  if (format?.type !== "triggered_tags" || !Array.isArray(format.tags)) return [];
  return format.tags.filter((tag) => typeof tag?.begin === "string" && typeof tag?.end === "string" && tag.begin)
    .map(({begin, end}) => ({begin, end}));
}

export class CallSpan {
  /** tags: CallTag[]; tokenText: token id -> its text. */
  constructor(tags, tokenText) {
    this.tags = tags;
    this.tokenText = tokenText;
    this.pieces = [];
  }

  /** A token the reply kept. */
  push(tokenId) {
    this.pieces.push(this.tokenText(tokenId));
  }

  /** Takes back the last push. */
  pop() {
    this.pieces.pop();
  }

  /** Whether the next token decides on a call (the reply's first) or is inside an open call tag. */
  get decidingOrCalling() {
    if (!this.tags.length) return false;
    if (!this.pieces.length) return true;
    const text = this.pieces.join("");
    return this.tags.some(({begin, end}) => {
      if (endsWithPartOf(text, begin)) return true;  // a begin spelled with several tokens, being written
      const opened = text.lastIndexOf(begin);
      return opened >= 0 && (!end || !text.includes(end, opened + begin.length));
    });
  }
}

/** Whether text ends with the start of `tag` (not all of it): "...<tool" of "<tool_call>". */
function endsWithPartOf(text, tag) {
  for (let length = Math.min(tag.length - 1, text.length); length > 0; length--) {
    if (text.endsWith(tag.slice(0, length))) return true;
  }
  return false;
}
