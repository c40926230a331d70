// Inside the confirmed-fetch frame (web/fetch/frame.html): a sandboxed document (an opaque
// origin: no access to the app's storage, cookies or page) whose policy, set by the server
// from ?origin=, allows connections to that one origin, redirects included. The page sends the
// URL the person approved and a port; the text goes back on that port. One fetch per frame.
const MAX_CHARS = 2_000_000;

addEventListener("message", async (event) => {
  const [port] = event.ports;
  if (event.source !== parent || !port || typeof event.data?.url !== "string") return;
  try {
    const response = await fetch(event.data.url, {credentials: "omit", referrerPolicy: "no-referrer"});
    if (!response.ok) throw new Error(`the server answered HTTP ${response.status}`);
    port.postMessage({text: (await response.text()).slice(0, MAX_CHARS)});
  } catch (error) {
    port.postMessage({error: error?.message || String(error)});
  }
}, {once: true});
