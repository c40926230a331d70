// Stop strings over streamed text: text that might be the start of a stop
// string is held back until it is known not to be one, so the caller never
// sees any part of the stop string.

export class StopStringFilter {
  constructor(stopStrings) {
    this.stopStrings = stopStrings;
    this.pending = "";
  }

  /** Adds a piece; returns {text to emit now, stopped}. */
  push(piece) {
    this.pending += piece;
    let cut = -1;
    for (const stop of this.stopStrings) {
      const at = this.pending.indexOf(stop);
      if (at !== -1 && (cut === -1 || at < cut)) cut = at;
    }
    if (cut !== -1) {
      const text = this.pending.slice(0, cut);
      this.pending = "";
      return {text, stopped: true};
    }
    const keep = this.#heldLength();
    const text = this.pending.slice(0, this.pending.length - keep);
    this.pending = this.pending.slice(this.pending.length - keep);
    return {text, stopped: false};
  }

  /** The generation ended without a stop string: everything held back, plus a last piece. */
  finish(piece = "") {
    const text = this.pending + piece;
    this.pending = "";
    return text;
  }

  // Longest tail of pending text that is a proper prefix of some stop string.
  #heldLength() {
    let longest = 0;
    for (const stop of this.stopStrings) {
      for (let n = Math.min(stop.length - 1, this.pending.length); n > longest; n--) {
        if (this.pending.endsWith(stop.slice(0, n))) { longest = n; break; }
      }
    }
    return longest;
  }
}
