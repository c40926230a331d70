// The model picker (folders from /models/index.json, with sizes), precision choice,
// and the download progress bar with its stage indicator.
import { el, setChildren } from "./dom.js";
import { formatBytes, formatEta, formatPercent } from "./format.js";

const STAGE_ORDER = ["download", "verify", "compile", "agent", "ready"];
const STAGE_WORDS = {
  download: "Downloading",
  verify: "Checking files",
  compile: "Preparing the model",
  agent: "Starting the assistant",
  ready: "Ready",
};

/** Fetches the list of exported models; throws an Error that says what to do. */
export async function fetchModelIndex(indexUrl) {
  let response;
  try {
    response = await fetch(indexUrl, { cache: "no-cache" });
  } catch (error) {
    throw new Error(`Could not reach ${indexUrl} (${error.message}). Is \`botpsy-web serve\` running?`);
  }
  if (!response.ok) {
    throw new Error(`${indexUrl} answered ${response.status}. Serve the page with \`botpsy-web serve\` or \`botpsy-web demo\`.`);
  }
  const data = await response.json();
  if (!Array.isArray(data.models)) throw new Error(`${indexUrl} has no "models" list.`);
  // Each folder's url is read against the list's own address (a built site writes "NAME/", so it
  // works in whatever folder the site is served from), and kept whole from here on.
  return data.models.map((model) => ({ ...model, url: new URL(model.url, response.url || indexUrl).href }));
}

/**
 * "about 14 tokens/s on a 2-core CPU": the decode speed `botpsy-web bench` measured for the
 * model's source (the model list carries it, py/botpsy_web/model_speeds.py), for the dtype the
 * page would pick on WASM when measured, else for one that was (named then); "" when none was.
 */
export function speedHint(model) {
  const speeds = model.decode_tokens_per_second || {};
  const measured = Object.keys(speeds).filter((dtype) => Number.isFinite(speeds[dtype]));
  if (!measured.length) return "";
  const recommended = model.recommended_dtype?.wasm;
  const dtype = measured.includes(recommended) ? recommended : measured[0];
  const which = (model.dtypes || []).length > 1 ? ` (${dtype})` : "";
  return `about ${Math.round(speeds[dtype])} tokens/s${which} on ${model.speed_measured_on || "the bench's machine"}`;
}

export class ModelPicker {
  constructor({ list, dtypeSelect, onChange }) {
    this.list = list;
    this.dtypeSelect = dtypeSelect;
    this.onChange = onChange;
    this.models = [];
    this.selected = null;
    dtypeSelect.addEventListener("change", () => this.onChange?.(this.selection()));
  }

  show(models, { preferred } = {}) {
    this.models = models;
    if (!models.length) {
      setChildren(this.list, el("p", { class: "notice warning", role: "status" },
        "No exported model found. Run ", el("code", {}, "botpsy-web demo"),
        " (or ", el("code", {}, "botpsy-web export"), ") and reload."));
      this.selected = null;
      this.onChange?.(null);
      return;
    }
    const radios = models.map((model, index) => {
      const id = `model-option-${index}`;
      const input = el("input", {
        type: "radio", name: "model", id, value: model.url,
        onchange: () => this.#select(model),
      });
      const dtypes = (model.dtypes || []).join(", ");
      const speed = speedHint(model);
      return el("label", { class: "model-option", for: id },
        input,
        el("span", { class: "model-name" }, model.name),
        el("span", { class: "model-meta" },
          `${model.architecture || "model"} · ${formatBytes(model.size_bytes)}${dtypes ? ` · ${dtypes}` : ""}`
          + (speed ? ` · ${speed}` : "")));
    });
    setChildren(this.list, radios);
    const initial = models.find((m) => m.url === preferred || m.name === preferred) || models[0];
    const input = this.list.querySelector(`input[value="${CSS.escape(initial.url)}"]`);
    if (input) input.checked = true;
    this.#select(initial);
  }

  showError(message) {
    setChildren(this.list, el("p", { class: "notice error", role: "alert" }, message));
  }

  /** Picks a precision of the selected model, when it offers it. */
  choose({ dtype }) {
    if (dtype && [...this.dtypeSelect.options].some((o) => o.value === dtype)) this.dtypeSelect.value = dtype;
  }

  selection() {
    if (!this.selected) return null;
    return { model: this.selected, dtype: this.dtypeSelect.value || undefined };
  }

  #select(model) {
    this.selected = model;
    const sizes = model.dtype_sizes || {};
    const options = [el("option", { value: "" }, "Recommended")];
    for (const dtype of model.dtypes || []) {
      const speed = model.decode_tokens_per_second?.[dtype];
      options.push(el("option", { value: dtype }, `${dtype}${sizes[dtype] ? ` · ${formatBytes(sizes[dtype])}` : ""}`
        + (Number.isFinite(speed) ? ` · about ${Math.round(speed)} tokens/s` : "")));
    }
    setChildren(this.dtypeSelect, options);
    this.onChange?.(this.selection());
  }
}

export class LoadProgress {
  /** notice: where a fact about the loaded model is said below the summary (storage-notice.js). */
  constructor({ container, bar, text, notice = null }) {
    this.container = container;
    this.bar = bar;
    this.text = text;
    this.notice = notice;
    this.stages = [...container.querySelectorAll("[data-stage]")];
  }

  start() {
    this.container.hidden = false;
    this.container.dataset.state = "loading";
    this.bar.value = 0;
    this.text.textContent = "Starting…";
    this.#showNotice(null);
    this.#markStage("download");
  }

  /** event: {stage, file, loaded, total, percent, etaSeconds} from the runtime. */
  update(event) {
    const stage = event.stage || "download";
    this.#markStage(stage);
    const fraction = Number.isFinite(event.percent) ? event.percent / 100
      : event.total > 0 ? event.loaded / event.total : null;
    if (fraction === null) this.bar.removeAttribute("value");
    else this.bar.value = Math.min(1, Math.max(0, fraction));
    const parts = [STAGE_WORDS[stage] || stage];
    if (stage === "download" && event.total > 0) {
      parts.push(`${formatBytes(event.loaded)} of ${formatBytes(event.total)}`, formatPercent(fraction), formatEta(event.etaSeconds));
    } else if (fraction !== null && stage !== "ready") {
      parts.push(formatPercent(fraction));
    }
    if (event.file && stage !== "ready") parts.push(event.file);
    this.text.textContent = parts.filter(Boolean).join(" · ");
  }

  /** notice: {text, hint} to say below the summary, or null. */
  done(summary, notice = null) {
    this.#markStage("ready", true);
    this.bar.value = 1;
    this.container.dataset.state = "ready";
    this.text.textContent = summary;
    this.#showNotice(notice);
  }

  fail(message) {
    this.container.dataset.state = "error";
    this.bar.value = 0;
    this.text.textContent = message;
  }

  #showNotice(notice) {
    if (!this.notice) return;
    this.notice.hidden = !notice;
    setChildren(this.notice, notice ? [el("strong", {}, notice.text), el("span", {}, ` ${notice.hint}`)] : []);
  }

  #markStage(stage, complete = false) {
    const index = STAGE_ORDER.indexOf(stage);
    for (const item of this.stages) {
      const itemIndex = STAGE_ORDER.indexOf(item.dataset.stage);
      item.dataset.state = itemIndex < index || (complete && itemIndex === index) ? "done"
        : itemIndex === index ? "active" : "todo";
      if (itemIndex === index) item.setAttribute("aria-current", "step");
      else item.removeAttribute("aria-current");
    }
  }
}

/**
 * The Storage panel's text, from the runtime's storageUsage(): the stored models and, of their
 * bytes, the prompt state kept so that the next visit's first answer skips the long prefill.
 */
export function describeStorage(usage) {
  const models = usage.models || [];
  const modelBytes = models.reduce((sum, m) => sum + (m.bytes || 0), 0);
  const stateBytes = models.reduce((sum, m) => sum + (m.derivedBytes || 0), 0);
  const parts = [`Models stored: ${formatBytes(modelBytes)} (${models.length})`];
  if (stateBytes > 0) parts.push(`of which ${formatBytes(stateBytes)} is the prepared prompt, so the next visit answers sooner`);
  if (Number.isFinite(usage.usedBytes)) {
    parts.push(`this site uses ${formatBytes(usage.usedBytes)} of ${formatBytes(usage.quotaBytes)}`);
  }
  return parts.join("; ") + ".";
}
