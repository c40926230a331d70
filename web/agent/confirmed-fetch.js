// fetch_url's narrow way out of the origin.
//
// The page and every worker are served with a policy that allows connections to this origin
// only (py/botpsy_web/content_policy.py), so the agent worker, where model-driven code runs,
// cannot send anything anywhere else. It can only ASK the page to fetch. The page fetches a URL
// only (1) while the person has the network setting on, (2) after the person approved exactly
// that URL in the page's own confirmation dialog (once per approval, within a minute), and
// (3) in a sandboxed frame whose policy allows that URL's origin and nothing else (web/fetch/).
// A compromised agent worker can at most open that dialog: nothing leaves without a visible yes.
import {Approvals} from "./approvals.js";

const FRAME_URL = new URL("../fetch/frame.html", import.meta.url);

/** The absolute http(s) URL a fetch is for, or an Error naming what is wrong with it. */
export function fetchableUrl(url) {
  let parsed;
  try { parsed = new URL(String(url ?? "").trim()); } catch { throw new Error(`not a URL: ${JSON.stringify(url)}`); }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new Error(`only http:// and https:// URLs can be fetched, got ${parsed.protocol}`);
  }
  return parsed;
}

export class ConfirmedFetches {
  constructor({frameUrl = FRAME_URL, timeoutMs = 30_000} = {}) {
    this.frameUrl = new URL(frameUrl);
    this.timeoutMs = timeoutMs;
    this.approvals = new Approvals();  // by URL
  }

  /** The person approved a fetch of `url` in the page's dialog. */
  approve(url) {
    this.approvals.grant(fetchableUrl(url).href);
  }

  /** Fetches an approved URL in its own frame; resolves to the response text. */
  async fetch(url) {
    const target = fetchableUrl(url);
    if (!this.approvals.take(target.href)) {
      throw new Error(`the person has not approved fetching ${target.href}; every fetch needs its own approval`);
    }
    const frame = document.createElement("iframe");
    frame.sandbox = "allow-scripts";  // an opaque origin: nothing of the app's is reachable from it
    frame.hidden = true;
    frame.src = `${this.frameUrl.href}?origin=${encodeURIComponent(target.origin)}`;
    const loaded = new Promise((resolve) => frame.addEventListener("load", resolve, {once: true}));
    document.body.append(frame);
    let timer;
    try {
      await loaded;
      const channel = new MessageChannel();
      const answer = new Promise((resolve) => { channel.port1.onmessage = ({data}) => resolve(data); });
      const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`fetching ${target.href} took longer than ${this.timeoutMs / 1000} s`)), this.timeoutMs);
      });
      frame.contentWindow.postMessage({url: target.href}, "*", [channel.port2]);
      const {text, error} = await Promise.race([answer, timeout]);
      if (error !== undefined) {
        throw new Error(`fetching ${target.href} failed: ${error} (only ${target.origin} may be reached, and it must allow cross-origin reads)`);
      }
      return text;
    } finally {
      clearTimeout(timer);
      frame.remove();
    }
  }
}
