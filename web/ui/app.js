// The demo page: wires the chat view, model picker, settings, files and storage
// panels to one AssistantSession.
import { AssistantSession, describeError } from "./assistant-session.js";
import { ChatView } from "./chat-view.js";
import { ConfirmDialog } from "./confirm-dialog.js";
import { el } from "./dom.js";
import { FileDrop } from "./file-drop.js";
import { describeBackend, formatRate } from "./format.js";
import { describeStorage, fetchModelIndex, LoadProgress, ModelPicker } from "./model-panel.js";
import { isolationMode, registerServiceWorker } from "./offline.js";
import { storageNotice } from "./storage-notice.js";
import { DEFAULT_SETTINGS, SettingsPanel } from "./settings-panel.js";
import { downloadText, transcriptToJson, transcriptToMarkdown } from "./transcript.js";
import { connectWebMcp } from "../webmcp/both-ways.js";
import { siteOffersTools } from "../webmcp/offer.js";

const MODELS_INDEX_URL = new URL("../../models/index.json", import.meta.url).href;
const LAST_MODEL_KEY = "botpsy.lastModel.v2"; // {url, backend, dtype} of the last model that loaded

const $ = (id) => document.getElementById(id);

const emptyState = el("div", { class: "empty-state" },
  el("h1", {}, "A private assistant, in this tab"),
  el("p", {}, "BotPsy runs on your device: your messages, notes and files never leave it."),
  el("ul", { class: "suggestions", "aria-label": "Things to try" },
    ["What is 17% of 2,340?", "Make a note: call the dentist on Friday", "What time is it in Tokyo?"]
      .map((text) => el("li", {}, el("button", {
        type: "button", class: "suggestion",
        onclick: () => { $("composer-input").value = text; $("composer-input").focus(); },
      }, text)))));

const view = new ChatView($("chat-log"), { emptyState });
const session = new AssistantSession({ view, confirmDialog: new ConfirmDialog(document.body) });
const progress = new LoadProgress({
  container: $("load-progress"), bar: $("progress-bar"), text: $("progress-text"), notice: $("storage-notice"),
});
const badge = $("backend-badge");
let loadedModel = null;

const settings = new SettingsPanel({
  thinking: $("thinking-toggle"),
  temperature: $("temperature-input"),
  temperatureValue: $("temperature-value"),
  toolToggles: $("tool-toggles"),
  toolCount: $("tool-count"),
  network: $("network-toggle"),
  toolCalls: $("tool-calls-select"),
  offerWebmcp: $("offer-webmcp"),
  defaults: { ...DEFAULT_SETTINGS, offerWebmcp: siteOffersTools() },
  onChange: (current) => {
    session.setSettings(current);
    webmcp.update();
  },
});
// WebMCP (web/webmcp/): only where the browser has it, and the offer only while the setting is on.
const webmcp = connectWebMcp({
  session,
  offerIsOn: () => settings.settings.offerWebmcp,
  setting: $("offer-webmcp-setting"),
  onToolsChanged: () => {
    settings.showTools(listAgentTools());
    session.setSettings(settings.current());
  },
});

const picker = new ModelPicker({
  list: $("model-list"),
  dtypeSelect: $("dtype-select"),
  onChange: (selection) => {
    $("load-button").disabled = !selection || session.loading;
    $("remove-model-button").disabled = !selection;
  },
});

// --- loading a model --------------------------------------------------------
async function loadSelectedModel() {
  const selection = picker.selection();
  if (!selection || session.loading) return;
  session.loading = true;
  await offlineReady; // so the runtime's workers start under the service worker
  setComposerEnabled(false);
  $("load-button").disabled = true;
  setBadge("loading", `Loading ${selection.model.name}…`);
  progress.start();
  try {
    const info = await session.loadModel(selection.model.url, {
      backend: $("backend-select").value,
      dtype: selection.dtype,
      onProgress: (event) => progress.update(event),
    });
    loadedModel = selection.model;
    localStorage.setItem(LAST_MODEL_KEY, JSON.stringify({ url: selection.model.url, backend: info.backend, dtype: info.dtype }));
    settings.showTools(listAgentTools());
    session.setSettings(settings.current());
    webmcp.update();
    const backendText = describeBackend(info);
    // Which mode this page runs in: isolated (threads), or why not and what changes it.
    const mode = isolationMode();
    const notes = [info.reason, mode.isolated ? "" : mode.text].filter(Boolean);
    progress.done(`${selection.model.name} is ready · ${backendText}${notes.map((note) => ` · ${note}`).join("")}`,
      storageNotice(info.storage));
    setBadge("ready", backendText, notes.join(" "));
    setComposerEnabled(true);
    $("composer-input").focus();
  } catch (error) {
    const message = `Could not load ${selection.model.name}: ${describeError(error)}`;
    progress.fail(message);
    setBadge("error", "Model not loaded");
    view.addNotice(message, { kind: "error", hint: loadHint(error) });
  } finally {
    session.loading = false;
    $("load-button").disabled = !picker.selection();
    refreshStorage();
  }
}

function listAgentTools() {
  return session.tools().map(({ name, description, enabledByDefault }) => ({ name, description, enabledByDefault }));
}

function loadHint(error) {
  const text = describeError(error).toLowerCase();
  if (text.includes("quota") || text.includes("storage")) return "Free some space (Storage, below) or pick a smaller precision.";
  if (text.includes("fetch") || text.includes("network")) return "Check that the server is running, then press Load again.";
  if (text.includes("webgpu")) return "Choose Backend: WASM (CPU) and press Load again.";
  return "Press Load to try again, or pick another model or precision.";
}

function setBadge(state, text, title = "") {
  badge.dataset.state = state;
  badge.textContent = text;
  badge.title = title || "";
  badge.dataset.base = text;
}

session.addEventListener("stats", ({ detail }) => {
  if (badge.dataset.state !== "ready") return;
  badge.textContent = `${badge.dataset.base} · ${formatRate(detail.tokensPerSecond)}`;
});

// --- chatting ---------------------------------------------------------------
function setComposerEnabled(enabled) {
  $("composer-input").disabled = !enabled;
  $("send-button").disabled = !enabled;
  $("composer-input").placeholder = enabled ? "Ask BotPsy anything…" : "Load a model to start";
}

session.addEventListener("status", ({ detail: { busy } }) => {
  $("send-button").hidden = busy;
  $("stop-button").hidden = !busy;
  if (busy) $("stop-button").focus();
  else if (session.ready) $("composer-input").focus();
});

$("composer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = $("composer-input");
  const text = input.value.trim();
  if (!text || session.busy || !session.ready) return;
  input.value = "";
  autoGrow(input);
  await session.ask(text).catch((error) => view.addNotice(describeError(error), { kind: "error" }));
});

$("composer-input").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $("composer").requestSubmit();
  }
});
$("composer-input").addEventListener("input", (event) => autoGrow(event.target));
$("stop-button").addEventListener("click", () => session.stop());
$("new-chat-button").addEventListener("click", () => {
  session.newChat();
  $("composer-input").focus();
});
$("load-button").addEventListener("click", loadSelectedModel);

function autoGrow(textarea) {
  textarea.style.height = "auto";
  textarea.style.height = `${Math.min(textarea.scrollHeight, 200)}px`;
}

// --- export -----------------------------------------------------------------
function exportTranscript(kind) {
  if (!view.transcript.length) {
    view.addNotice("Nothing to export yet.", { hint: "Ask something first." });
    return;
  }
  const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, "-");
  const options = { model: loadedModel?.name || "" };
  if (kind === "md") {
    downloadText(`botpsy-chat-${stamp}.md`, transcriptToMarkdown(view.transcript, options), "text/markdown");
  } else {
    const json = transcriptToJson(view.transcript, { ...options, conversation: session.exportConversation() });
    downloadText(`botpsy-chat-${stamp}.json`, json, "application/json");
  }
}
$("export-md-button").addEventListener("click", () => exportTranscript("md"));
$("export-json-button").addEventListener("click", () => exportTranscript("json"));

// --- files ------------------------------------------------------------------
new FileDrop({
  zone: $("drop-zone"),
  input: $("file-input"),
  list: $("file-list"),
  onFiles: (files) => session.addUserFiles(files),
  onRefused: (reasons) => view.addNotice("Some files were not added.", { kind: "warning", hint: reasons.join("; ") }),
});

// --- storage ------------------------------------------------------------------
async function refreshStorage() {
  try {
    // {usedBytes, quotaBytes, models: [{folderUrl, bytes, derivedBytes}]} from the runtime.
    $("storage-text").textContent = describeStorage(await session.storageUsage());
  } catch (error) {
    $("storage-text").textContent = `Storage figures are unavailable (${describeError(error)}).`;
  }
}
// A warm-up before the first message stores the prompt's state: its size shows here.
session.addEventListener("warmup", () => refreshStorage());

$("remove-model-button").addEventListener("click", async () => {
  const selection = picker.selection();
  if (!selection) return;
  const button = $("remove-model-button");
  button.disabled = true;
  try {
    await session.deleteModel(new URL(selection.model.url, location.href).href);
    webmcp.update(); // its tools went with it
    if (loadedModel?.url === selection.model.url) {
      loadedModel = null;
      setComposerEnabled(false);
      setBadge("idle", "No model loaded");
      $("load-progress").hidden = true;
    }
    localStorage.removeItem(LAST_MODEL_KEY);
    view.addNotice(`${selection.model.name} was removed from this device.`, { hint: "Load it again to download it." });
  } catch (error) {
    view.addNotice(`Could not remove ${selection.model.name}: ${describeError(error)}`, { kind: "error" });
  } finally {
    button.disabled = false;
    refreshStorage();
  }
});

// --- being offline is fine: say so, calmly -----------------------------------------
function showNetworkState() {
  $("network-badge").hidden = navigator.onLine;
  $("network-badge").title = "No network: everything still runs on this device.";
}
window.addEventListener("online", showNetworkState);
window.addEventListener("offline", showNetworkState);
showNetworkState();

// --- small screens: the side panel folds away --------------------------------
$("panel-toggle").addEventListener("click", () => {
  const open = document.body.dataset.panel !== "open";
  document.body.dataset.panel = open ? "open" : "closed";
  $("panel-toggle").setAttribute("aria-expanded", String(open));
  if (open) $("side-panel").querySelector("input, button, select")?.focus();
});
$("side-panel").addEventListener("keydown", (event) => {
  if (event.key === "Escape" && document.body.dataset.panel === "open") {
    document.body.dataset.panel = "closed";
    $("panel-toggle").setAttribute("aria-expanded", "false");
    $("panel-toggle").focus();
  }
});

// --- start --------------------------------------------------------------------
const offlineReady = registerServiceWorker().then((status) => console.info(`BotPsy: ${status}`));

function readLastModel() {
  try {
    const saved = JSON.parse(localStorage.getItem(LAST_MODEL_KEY) || "null");
    // Whole URLs since the model list's urls are resolved (model-panel.js); older saves hold a path.
    return saved && typeof saved.url === "string" ? { ...saved, url: new URL(saved.url, location.href).href } : null;
  } catch {
    return null;
  }
}

async function start() {
  try {
    const models = await fetchModelIndex(MODELS_INDEX_URL);
    const lastModel = readLastModel();
    picker.show(models, { preferred: lastModel?.url });
    // Coming back to a model already on this device: reopen it without a click.
    // (same backend and precision, so the files already stored are the ones used).
    if (lastModel && models.some((m) => m.url === lastModel.url)) {
      picker.choose({ dtype: lastModel.dtype });
      if ([...$("backend-select").options].some((o) => o.value === lastModel.backend)) $("backend-select").value = lastModel.backend;
      loadSelectedModel();
    }
  } catch (error) {
    picker.showError(describeError(error));
  }
  refreshStorage();
}

window.botpsy = { session, view }; // for the console and the browser tests
start();
