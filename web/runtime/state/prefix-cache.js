// Prefix reuse across generate calls. An agent resends the whole conversation
// every step; here only the tokens after the longest already-processed prefix
// are computed. KV caches can be cut back to any length. Conv and recurrent
// state cannot, so for models that have them the state is snapshotted (by
// reference, no copy) at message boundaries and at the end of each prompt,
// and a new prompt resumes from the longest snapshot that is its prefix.

function commonPrefixLength(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

function isPrefixOf(prefix, ids) {
  return prefix.length <= ids.length && commonPrefixLength(prefix, ids) === prefix.length;
}

export class PrefixCache {
  constructor(runner, {maxSnapshots = 8} = {}) {
    this.runner = runner;
    this.maxSnapshots = maxSnapshots;
    this.snapshots = [];  // {ids, state, lastUsed}
    this.clock = 0;
    const boundaries = runner.manifest.message_boundary_token_ids ?? [];
    this.boundaryIds = new Set(boundaries);
  }

  get needsSnapshots() { return !this.runner.cache.truncatable; }

  /**
   * Puts the runner in the state of the longest reusable prefix of promptIds
   * (at most promptIds.length - 1 tokens: the last one must run to give logits).
   * Returns how many prompt tokens were reused.
   */
  async resumeFor(promptIds) {
    const {runner} = this;
    const limit = promptIds.length - 1;
    const live = commonPrefixLength(runner.processedIds, promptIds);
    let liveUsable = 0;
    if (runner.cache.truncatable) liveUsable = Math.min(live, limit);
    else if (live === runner.processedIds.length && live <= limit) liveUsable = live;

    let best = null;
    for (const snapshot of this.snapshots) {
      if (snapshot.ids.length <= limit && snapshot.ids.length > (best?.ids.length ?? 0) && isPrefixOf(snapshot.ids, promptIds)) {
        best = snapshot;
      }
    }
    if (best && best.ids.length > liveUsable) {
      best.lastUsed = ++this.clock;
      runner.cache.restore(best.state);
      runner.processedIds = best.ids.slice();
      return best.ids.length;
    }
    if (liveUsable === 0) {
      runner.cache.reset();
      runner.processedIds = [];
      return 0;
    }
    if (liveUsable < runner.processedIds.length) await runner.truncate(liveUsable);
    return liveUsable;
  }

  /** Positions (state lengths) inside [from, to) where a snapshot should be taken while prefilling. */
  snapshotPoints(promptIds, from) {
    if (!this.needsSnapshots) return [];
    const points = [];
    for (let i = from + 1; i < promptIds.length; i++) if (this.boundaryIds.has(promptIds[i])) points.push(i);
    return points;
  }

  /** Remembers the runner's current state (no-op for KV-only models, which truncate instead). */
  take() {
    if (!this.needsSnapshots) return;
    const ids = this.runner.processedIds;
    if (!ids.length) return;
    const existing = this.snapshots.find((s) => s.ids.length === ids.length && isPrefixOf(s.ids, ids));
    if (existing) { existing.lastUsed = ++this.clock; return; }
    this.snapshots.push({ids: ids.slice(), state: this.runner.cache.snapshot(), lastUsed: ++this.clock});
    while (this.snapshots.length > this.maxSnapshots) {
      const oldest = this.snapshots.reduce((a, b) => (a.lastUsed <= b.lastUsed ? a : b));
      this.#drop(oldest);
    }
  }

  #drop(snapshot) {
    this.snapshots.splice(this.snapshots.indexOf(snapshot), 1);
    this.runner.cache.releaseSnapshot(snapshot.state);
  }

  /** Forgets everything: the next prompt runs from an empty state. */
  clear() {
    for (const snapshot of [...this.snapshots]) this.#drop(snapshot);
    this.runner.cache.reset();
    this.runner.processedIds = [];
  }
}
