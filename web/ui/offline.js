// Registers the service worker (web/sw.js) that keeps the app usable offline.
// It needs scope "/" so it controls index.html; the server must send
// `Service-Worker-Allowed: /` for /web/sw.js. Without it, the app still works online.

export const SERVICE_WORKER_URL = new URL("../sw.js", import.meta.url);

export async function registerServiceWorker({ onStatus } = {}) {
  if (!("serviceWorker" in navigator)) {
    onStatus?.("Offline use is unavailable in this browser.");
    return null;
  }
  const scope = new URL("../../", import.meta.url).pathname;
  try {
    const registration = await navigator.serviceWorker.register(SERVICE_WORKER_URL, { scope, type: "module" });
    return registration;
  } catch (error) {
    onStatus?.(`Offline use is off: the service worker did not register (${error.message}).`);
    return null;
  }
}
