// Registers the service worker (web/sw.js) that keeps the app usable offline.
// It needs scope "/" so it controls index.html; the server sends
// `Service-Worker-Allowed: /` for that. Without a service worker the app still works online.
// A host that sends no headers at all (GitHub Pages, a plain bucket) refuses that scope; a site
// built by `botpsy-web build-site` then has /sw.js at its root, which loads web/sw.js with the
// headers of every route, and from the next load the page is isolated (see isolationMode).

export const SERVICE_WORKER_URL = new URL("../sw.js", import.meta.url);
const ROOT_SCOPE = new URL("../../", import.meta.url).pathname;
const ROOT_SERVICE_WORKER_URL = new URL("../../sw.js", import.meta.url);

/**
 * Registers the worker and resolves once it controls this page (or after timeoutMs,
 * or at once when unavailable), so workers started afterwards have their files cached.
 * Resolves to a short status line.
 */
export async function registerServiceWorker({ timeoutMs = 8000 } = {}) {
  if (!("serviceWorker" in navigator)) return "Offline use is unavailable in this browser.";
  // The one that worked last time first (a host without headers refuses web/sw.js every time).
  const [first, second] = navigator.serviceWorker.controller?.scriptURL === ROOT_SERVICE_WORKER_URL.href
    ? [ROOT_SERVICE_WORKER_URL, SERVICE_WORKER_URL] : [SERVICE_WORKER_URL, ROOT_SERVICE_WORKER_URL];
  try {
    await navigator.serviceWorker.register(first, { scope: ROOT_SCOPE });
  } catch (error) {
    try {
      await navigator.serviceWorker.register(second, { scope: ROOT_SCOPE });
    } catch {
      return `Offline use is off: the service worker did not register (${error.message}).`;
    }
  }
  const controlled = await whenControlled(timeoutMs);
  if (!controlled) return "Offline use is still being set up.";
  // Files this page loaded before the worker took over: ask it to keep them too.
  const urls = [location.href, ...performance.getEntriesByType("resource").map((entry) => entry.name)];
  navigator.serviceWorker.controller?.postMessage({ type: "cache-urls", urls });
  return "Ready for offline use.";
}

function whenControlled(timeoutMs) {
  if (navigator.serviceWorker.controller) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    navigator.serviceWorker.addEventListener("controllerchange", () => {
      clearTimeout(timer);
      resolve(true);
    }, { once: true });
  });
}

/**
 * How this page runs, in words: "isolated" (several WASM threads, the policy from the server or
 * the service worker) or why not: a host that sends no headers gets them from the service worker
 * from the next load on.
 * @returns {{isolated: boolean, text: string}}
 */
export function isolationMode() {
  if (globalThis.crossOriginIsolated) return { isolated: true, text: "Cross-origin isolated: several WASM threads." };
  const controlled = Boolean(navigator.serviceWorker?.controller);
  return {
    isolated: false,
    text: controlled
      ? "Not cross-origin isolated (WASM runs on one thread). Reload the page: its service worker adds the isolation headers this host does not send."
      : "Not cross-origin isolated (WASM runs on one thread): this host sends no COOP/COEP headers and no service worker controls the page yet.",
  };
}
