// Where a generation's time goes, by phase (session.run, feeds, sampling,
// detokenizing, posting tokens, ...). Marks are consecutive: each mark books
// the time since the previous one to the phase it names, so the phases add up
// to the wall time between the first and the last mark. A few
// performance.now() calls per token; cheap enough to stay on.

export class PhaseTimes {
  constructor() {
    this.ms = {};
    this.last = performance.now();
  }

  /** Books the time since the previous mark to `phase`. */
  mark(phase) {
    const now = performance.now();
    this.ms[phase] = (this.ms[phase] ?? 0) + (now - this.last);
    this.last = now;
  }

  /** Forgets the time since the previous mark (it belongs to nobody). */
  skip() {
    this.last = performance.now();
  }

  /** {phase: ms} rounded to 0.01 ms. */
  toJSON() {
    return Object.fromEntries(Object.entries(this.ms).map(([phase, ms]) => [phase, Math.round(ms * 100) / 100]));
  }
}

/** A stand-in when nobody asks for timings. */
export const NO_PHASE_TIMES = Object.freeze({mark() {}, skip() {}});
