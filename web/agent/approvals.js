// What the person approved in the page's own confirmation dialog, for the page to check before
// it acts on the agent worker's request. The worker runs Python's confirmation gate, but a worker
// taken over by model-driven code could skip it and ask the page directly; the page then runs a
// host tool that needs confirmation, or fetches a URL, only for what was approved: those exact
// arguments, once, within APPROVAL_LIFETIME_MS.

const APPROVAL_LIFETIME_MS = 60_000;

/** JSON with object keys sorted, so the same arguments give the same text whoever wrote them. */
export function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

export class Approvals {
  #granted = new Map();  // key -> approval times still unused

  grant(key) {
    this.#granted.set(key, [...(this.#granted.get(key) ?? []), performance.now()]);
  }

  /** True (and used up) when `key` was approved and not yet used. */
  take(key) {
    const fresh = (this.#granted.get(key) ?? []).filter((at) => performance.now() - at < APPROVAL_LIFETIME_MS);
    const found = fresh.length > 0;
    fresh.shift();
    if (fresh.length) this.#granted.set(key, fresh); else this.#granted.delete(key);
    return found;
  }
}
