// BotPsy's service worker: the app keeps working offline after one visit.
//
// - App files (index.html, web/, static/css|icons|build|examples) are served network
//   first, so an online visit always gets the current code, and from the cache offline.
// - Runtimes under /node_modules/ are pinned by package.json: served cache first.
// - Model files are stored by the runtime itself (web/runtime/storage/model-files.js, Cache API
//   "botpsy-models-v1") once their sha256 is checked. This worker only reads them back
//   through caches.match and never stores them a second time.
// - /models/index.json (the model list) is kept so the picker works offline.
//
// - Content-Security-Policy: a cached response keeps the policy the server sent with it
//   (py/botpsy_web/content_policy.py), so the page and every worker it starts offline are as
//   confined as online. What this worker makes up itself (offline and range errors) may run
//   nothing, and so may a stored model file. The confirmed-fetch frame (/web/fetch/) is never cached: its policy names the one
//   origin the person approved, and it needs the network anyway.
//
// Bump VERSION to ship a new app version: the next visit installs it, deletes the old
// app cache, and leaves stored models alone.

const VERSION = "2026-12-07.1";
const APP_CACHE = `botpsy-app-${VERSION}`;
const APP_CACHE_PREFIX = "botpsy-app-";
const INDEX_CACHE = "botpsy-model-index";
// The app's root: this file is web/sw.js, or runs inside the site's own sw.js at the root
// (below), which imports it. The root is an origin's "/" or a folder (https://host/botpsy/).
const ROOT = new URL(self.location.pathname.endsWith("/web/sw.js") ? "../" : "./", self.location.href);
// A host that sends no headers (GitHub Pages, a plain bucket) gets /sw.js from
// `botpsy-web build-site`: it names every route's headers (py/botpsy_web/site/headers.py), then
// loads this file. Responses that arrive without COEP get them here, before they are kept or
// used, so from the second load the page is isolated and confined as on a host that sends them.
const SITE_HEADERS = self.BOTPSY_SITE_HEADERS ?? null;

// Fetched at install; anything missing (e.g. an unbuilt agent bundle) is skipped,
// and picked up later when the page uses it. Every module the page and its workers import is
// here: tests/product/test_offline_precache.py follows their imports and says what is missing.
const PRECACHE = [
  "", "index.html",
  "static/css/tokens.css", "static/css/chat.css", "static/css/app.css", "static/icons/botpsy.svg",
  "web/ui/app.js", "web/ui/assistant-session.js", "web/ui/chat-view.js", "web/ui/tool-card.js",
  "web/ui/confirm-dialog.js", "web/ui/dom.js", "web/ui/format.js", "web/ui/hidden-characters.js", "web/ui/icons.js",
  "web/ui/model-panel.js", "web/ui/settings-panel.js", "web/ui/file-drop.js", "web/ui/transcript.js",
  "web/ui/stop-notice.js", "web/ui/storage-notice.js", "web/ui/offline.js", "web/ui/markdown.js", "web/ui/streaming-markdown.js", "web/ui/code-block.js",
  "web/runtime/model-client.js", "web/runtime/protocol.js", "web/runtime/model-worker.js",
  "web/runtime/model/backend-selection.js", "web/runtime/model/dtype-graphs.js", "web/runtime/model/loaded-model.js",
  "web/runtime/model/model-runner.js", "web/runtime/model/ort-loader.js", "web/runtime/model/tokenizer.js",
  "web/runtime/decode/context-window.js", "web/runtime/decode/draft-feeder.js", "web/runtime/decode/generation.js",
  "web/runtime/decode/logits-processors.js",
  "web/runtime/decode/phase-times.js", "web/runtime/decode/prefill-plan.js", "web/runtime/decode/prompt-lookup.js",
  "web/runtime/decode/sampling.js", "web/runtime/decode/stop-strings.js",
  "web/runtime/state/appending-cache.js", "web/runtime/state/cache-state.js", "web/runtime/state/prefix-cache.js",
  "web/runtime/state/prompt-state-format.js", "web/runtime/state/prompt-state.js",
  "web/runtime/state/shipped-prompt-state.js",
  "web/runtime/storage/cache-api.js", "web/runtime/storage/model-files.js", "web/runtime/storage/opfs.js",
  "web/runtime/storage/sha256.js",
  "web/runtime/grammar/call-span.js",
  "web/runtime/grammar/token-bitmask.js", "web/runtime/grammar/tool-call-grammar.js",
  "web/runtime/grammar/untagged-call.js", "web/runtime/grammar/xgrammar-engine.js",
  "web/agent/agent-host.js", "web/agent/agent-worker.js", "web/agent/rpc-channel.js", "web/agent/approvals.js",
  "web/agent/confirmed-fetch.js", "web/agent/host-tool-spec.js", "web/agent/user-files.js",
  "web/agent/indexeddb-store.js", "web/agent/python-runtime.js", "web/agent/turn-stats.js",
  "web/webmcp/model-context.js", "web/webmcp/offer.js", "web/webmcp/page-tools.js", "web/webmcp/both-ways.js",
  // run_python's sandbox: the page builds its frame from these bytes, so it starts offline too
  // (web/sandbox/sandbox-client.js), even on a page that never used it online.
  "web/sandbox/sandbox-client.js", "web/sandbox/protocol.js", "web/sandbox/sandbox.html",
  "web/sandbox/sandbox-frame.js", "web/sandbox/wasm-memory-cap.js", "web/sandbox/sandbox-worker.js",
  "static/build/agent-py.zip",
  "node_modules/pyodide/pyodide.mjs", "node_modules/pyodide/pyodide.asm.mjs",
  "node_modules/pyodide/pyodide.asm.wasm", "node_modules/pyodide/python_stdlib.zip",
  "node_modules/pyodide/pyodide-lock.json",
  "node_modules/onnxruntime-web/dist/ort.wasm.min.mjs",
  "node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.mjs",
  "node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm",
  "node_modules/@huggingface/tokenizers/dist/tokenizers.min.mjs",
  "node_modules/@mlc-ai/web-xgrammar/lib/index.js",  // tool-call grammars (web/runtime/grammar/)
  // answers as Markdown (web/ui/markdown.js): the page cannot show one without them
  "node_modules/markdown-it/dist/browser/markdown-it.esm.min.mjs", "node_modules/dompurify/dist/purify.es.mjs",
].map((path) => new URL(path, ROOT).href);

// Without these on every response, a page served from here loses crossOriginIsolated
// (and with it WASM threads).
const ISOLATION_HEADERS = {
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Embedder-Policy": "require-corp",
  "Cross-Origin-Resource-Policy": "cross-origin",
};
const NOTHING_ALLOWED = {"Content-Security-Policy": "default-src 'none'", "X-Content-Type-Options": "nosniff"};

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(APP_CACHE);
    await Promise.all(PRECACHE.map((url) => storeFresh(cache, url)));
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith(APP_CACHE_PREFIX) && name !== APP_CACHE) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

// The page sends the URLs it loaded before this worker controlled it (first visit).
self.addEventListener("message", (event) => {
  const { type, urls } = event.data || {};
  if (type === "cache-urls" && Array.isArray(urls)) {
    event.waitUntil((async () => {
      const wanted = urls.map((url) => [url, cacheNameFor(new URL(url))]).filter(([, name]) => name);
      await Promise.all(wanted.map(async ([url, name]) => {
        const cache = await caches.open(name);
        if (!(await cache.match(url))) await storeFresh(cache, url);
      }));
      event.source?.postMessage({ type: "cached-urls", count: wanted.length });
    })());
  } else if (type === "version") {
    event.source?.postMessage({ type: "version", version: VERSION });
  }
});

// Where this worker itself keeps a URL (null: not kept, e.g. model weights).
function cacheNameFor(url) {
  const route = routeOf(url);
  if (route === "app" || route === "runtime") return APP_CACHE;
  if (route === "model-index" || (route === "model-file" && isSmallModelFile(url.href))) return INDEX_CACHE;
  return null;
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  const route = routeOf(url);
  if (!route) return;
  if (route === "uncached") event.respondWith(fetch(request).then(withSiteHeaders));
  else if (route === "model-index") event.respondWith(networkFirst(request, INDEX_CACHE));
  else if (route === "model-file") event.respondWith(modelFile(request));
  else if (route === "runtime") event.respondWith(cacheFirst(request));
  else event.respondWith(networkFirst(request, APP_CACHE));
});

// The URL's path below the app's root, written from the root ("/web/ui/app.js"), wherever the
// site is served (its origin's root, or a folder such as /botpsy/); null for a URL outside it.
function appPath(url) {
  if (url.origin !== ROOT.origin || !url.pathname.startsWith(ROOT.pathname)) return null;
  return `/${url.pathname.slice(ROOT.pathname.length)}`;
}

function routeOf(url) {
  const path = appPath(url);
  if (path === null) return null;
  if (path === "/models/index.json") return "model-index";
  if (path.startsWith("/models/")) return "model-file";
  if (path.startsWith("/node_modules/")) return "runtime";
  if (path.startsWith("/web/fetch/")) return SITE_HEADERS ? "uncached" : null;
  if (path === "/" || path === "/index.html" || path.startsWith("/web/")
      || /^\/static\/(css|icons|build|examples)\//.test(path)) return "app";
  return null;
}

async function networkFirst(request, cacheName) {
  const cache = await caches.open(cacheName);
  const key = cacheKey(request);
  try {
    const response = withSiteHeaders(await fetch(request));
    if (response.ok && response.status === 200 && !request.headers.has("Range")) {
      await cache.put(key, response.clone());
    }
    return response;
  } catch (error) {
    const cached = await caches.match(key, { ignoreSearch: true })
      || (request.mode === "navigate" ? await cache.match(new URL("index.html", ROOT).href) : null);
    if (cached) return withIsolationHeaders(cached);
    return offlineResponse(request, error);
  }
}

async function cacheFirst(request) {
  const cached = await caches.match(cacheKey(request), { ignoreSearch: true });
  if (cached) return sliceIfRanged(request, withIsolationHeaders(cached));
  const response = withSiteHeaders(await fetch(request));
  if (response.status === 200 && !request.headers.has("Range")) {
    const cache = await caches.open(APP_CACHE);
    await cache.put(cacheKey(request), response.clone());
  }
  return response;
}

// Model files: whatever the runtime stored (any cache), else the network. Weights and the
// tokenizer are never stored here (the runtime stores them once verified); only the folder's
// small JSON files the agent reads itself are kept, so a reload works offline, and the index of
// the prompt states shipped with the model (the runtime keeps the states themselves): network
// first, since a rebuilt site ships another.
const SMALL_MODEL_FILES = ["config.json", "generation_config.json", "tokenizer_config.json",
  "special_tokens_map.json", "chat_template.jinja", "prompt-states.json"];

function isSmallModelFile(url) {
  return SMALL_MODEL_FILES.some((name) => url.endsWith(`/${name}`));
}

async function modelFile(request) {
  const key = cacheKey(request);
  if (isSmallModelFile(key)) return networkFirst(request, INDEX_CACHE);
  const cached = await caches.match(key, { ignoreSearch: true });
  if (cached) return sliceIfRanged(request, withIsolationHeaders(cached));
  try {
    return withSiteHeaders(await fetch(request));
  } catch (error) {
    return offlineResponse(request, error);
  }
}

function cacheKey(request) {
  const url = new URL(request.url);
  url.hash = "";
  return appPath(url) === "/" ? ROOT.href : url.href;
}

async function storeFresh(cache, url) {
  try {
    const response = withSiteHeaders(await fetch(url, { cache: "no-cache" }));
    if (response.status === 200) await cache.put(url, response);
  } catch {
    // Missing or offline: the page's own use of the file will cache it later.
  }
}

function withIsolationHeaders(response) {
  if (response.type === "opaque") return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(ISOLATION_HEADERS)) headers.set(name, value);
  // Model files the runtime stored itself carry no policy: they are data, and may run nothing.
  if (!headers.has("Content-Security-Policy")) {
    for (const [name, value] of Object.entries(NOTHING_ALLOWED)) headers.set(name, value);
  }
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

// The headers /sw.js names for this response's route, when the host sent none (SITE_HEADERS above).
function withSiteHeaders(response) {
  if (!SITE_HEADERS || response.type !== "basic" || response.headers.has("Cross-Origin-Embedder-Policy")) return response;
  const url = new URL(response.url);
  const path = appPath(url);
  const rule = path === null ? null
    : SITE_HEADERS.rules.find(([rulePath, folder]) => (folder ? path.startsWith(rulePath) : path === rulePath));
  const named = rule && response.ok ? rule[2] : SITE_HEADERS.nothingAllowed;
  const policy = named["Content-Security-Policy"] ?? "";
  const origin = policy.includes(SITE_HEADERS.placeholder) ? queryOrigin(url) : "";
  if (origin === null) {
    return new Response("The fetch frame needs ?origin=http(s)://host[:port].", {
      status: 400, headers: { "Content-Type": "text/plain; charset=utf-8", ...SITE_HEADERS.nothingAllowed } });
  }
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(named)) headers.set(name, value.replace(SITE_HEADERS.placeholder, origin));
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

// The confirmed-fetch frame's ?origin=, only when it is exactly an http(s) origin (as the server checks it).
function queryOrigin(url) {
  const value = url.searchParams.get("origin") ?? "";
  try {
    const parsed = new URL(value);
    return ["http:", "https:"].includes(parsed.protocol) && parsed.origin === value ? value : null;
  } catch {
    return null;
  }
}

// The Cache API holds whole files; answer a Range request with the asked slice.
async function sliceIfRanged(request, response) {
  const range = request.headers.get("Range");
  const match = range && /^bytes=(\d*)-(\d*)$/.exec(range.trim());
  if (!match || response.status !== 200) return response;
  const body = await response.arrayBuffer();
  const size = body.byteLength;
  let start = match[1] === "" ? Math.max(0, size - Number(match[2])) : Number(match[1]);
  let end = match[1] !== "" && match[2] !== "" ? Math.min(Number(match[2]), size - 1) : size - 1;
  if (start >= size || end < start) {
    return new Response(null, { status: 416, headers: { "Content-Range": `bytes */${size}`, ...NOTHING_ALLOWED } });
  }
  const headers = new Headers(response.headers);
  headers.set("Content-Range", `bytes ${start}-${end}/${size}`);
  headers.set("Content-Length", String(end - start + 1));
  return new Response(body.slice(start, end + 1), { status: 206, headers });
}

function offlineResponse(request, error) {
  const message = `BotPsy is offline and ${new URL(request.url).pathname} was not saved for offline use (${error?.message || "no network"}).`;
  return new Response(message, {
    status: 503, statusText: "Offline",
    headers: { "Content-Type": "text/plain; charset=utf-8", ...ISOLATION_HEADERS, ...NOTHING_ALLOWED },
  });
}
