// Settings the person controls: thinking, temperature, which tools, network access.
// Kept in localStorage so they survive a reload.
import { el, setChildren } from "./dom.js";

const STORAGE_KEY = "botpsy.settings.v2";
export const DEFAULT_SETTINGS = Object.freeze({
  thinking: false,
  temperature: 0.7,
  toolChoices: {}, // {toolName: true|false} where the person changed the agent's default set
  allowNetwork: false,
  toolCalls: null, // null: the model's default ("auto" when its folder names a tool-call format)
  offerWebmcp: false, // the enabled tools offered to the browser's own agents (web/webmcp/offer.js)
});
// The tools that reach the network (py/botpsy_agent/safety.py NETWORK_TOOLS): on with "Allow web fetches".
const NETWORK_TOOLS = ["fetch_url"];

/** defaults: DEFAULT_SETTINGS, or a site's own (a build-site --webmcp page offers its tools unless the person said no). */
export function loadSettings(storage = globalThis.localStorage, defaults = DEFAULT_SETTINGS) {
  try {
    const saved = JSON.parse(storage?.getItem(STORAGE_KEY) || "{}");
    return { ...defaults, ...saved };
  } catch {
    return { ...defaults };
  }
}

export function saveSettings(settings, storage = globalThis.localStorage) {
  try {
    storage?.setItem(STORAGE_KEY, JSON.stringify(settings));
  } catch {
    // Private windows can refuse storage; settings then last for this visit only.
  }
}

/** Whether a tool is on: the person's choice, else the agent's default set (network tools follow the switch). */
export function toolIsOn(tool, settings) {
  const choice = settings.toolChoices[tool.name];
  if (choice !== undefined) return choice;
  if (NETWORK_TOOLS.includes(tool.name)) return settings.allowNetwork;
  return tool.enabledByDefault !== false;
}

/** What AgentHost.setSettings expects, given the tools the agent lists ({name, enabledByDefault}). */
export function agentSettings(settings, tools) {
  const chosen = {
    thinking: settings.thinking,
    temperature: settings.temperature,
    allowNetwork: settings.allowNetwork,
    toolCalls: settings.toolCalls,
  };
  // Until the person changes a tool, the agent's own default set applies (enabledTools null);
  // it keeps the prompt short, and every tool listed costs prefill time.
  const known = new Set(tools.map((tool) => tool.name));
  const changed = Object.keys(settings.toolChoices).some((name) => known.has(name));
  chosen.enabledTools = changed ? tools.filter((tool) => toolIsOn(tool, settings)).map((tool) => tool.name) : null;
  return chosen;
}

export class SettingsPanel {
  constructor({ thinking, temperature, temperatureValue, toolToggles, toolCount, network, toolCalls, offerWebmcp,
                defaults = DEFAULT_SETTINGS, onChange }) {
    this.inputs = { thinking, temperature, temperatureValue, toolToggles, toolCount, network, toolCalls, offerWebmcp };
    this.onChange = onChange;
    this.settings = loadSettings(globalThis.localStorage, defaults);
    this.tools = [];
    thinking.checked = this.settings.thinking;
    temperature.value = String(this.settings.temperature);
    temperatureValue.textContent = this.settings.temperature.toFixed(2);
    network.checked = this.settings.allowNetwork;
    if (toolCalls) {  // "" in the select stands for null (the model's default)
      toolCalls.value = this.settings.toolCalls ?? "";
      toolCalls.addEventListener("change", () => this.#update({ toolCalls: toolCalls.value || null }));
    }
    if (offerWebmcp) {  // not an agent setting: read as settings.offerWebmcp by the page (web/webmcp/offer.js)
      offerWebmcp.checked = Boolean(this.settings.offerWebmcp);
      offerWebmcp.addEventListener("change", () => this.#update({ offerWebmcp: offerWebmcp.checked }));
    }
    thinking.addEventListener("change", () => this.#update({ thinking: thinking.checked }));
    temperature.addEventListener("input", () => {
      temperatureValue.textContent = Number(temperature.value).toFixed(2);
      this.#update({ temperature: Number(temperature.value) });
    });
    network.addEventListener("change", () => {
      this.#update({ allowNetwork: network.checked });
      this.showTools(this.tools); // network tools follow the switch unless chosen one by one
    });
    this.showTools([]);
  }

  /** tools: [{name, description, enabledByDefault}] as the agent lists them. */
  showTools(tools) {
    this.tools = tools;
    this.#countTools();
    if (!tools.length) {
      setChildren(this.inputs.toolToggles, el("p", { class: "hint" }, "The tool list appears once a model is loaded."));
      return;
    }
    setChildren(this.inputs.toolToggles, tools.map((tool) => {
      const input = el("input", {
        type: "checkbox", value: tool.name,
        checked: toolIsOn(tool, this.settings),
        onchange: () => {
          this.#update({ toolChoices: { ...this.settings.toolChoices, [tool.name]: input.checked } });
          this.#countTools();
        },
      });
      return el("label", { class: "tool-toggle", title: tool.description || "" },
        input, el("span", {}, tool.name));
    }));
  }

  #countTools() {
    if (!this.inputs.toolCount) return;
    const on = this.tools.filter((tool) => toolIsOn(tool, this.settings)).length;
    this.inputs.toolCount.textContent = this.tools.length ? `(${on} of ${this.tools.length} on)` : "";
  }

  current() {
    return agentSettings(this.settings, this.tools);
  }

  #update(change) {
    this.settings = { ...this.settings, ...change };
    saveSettings(this.settings);
    this.onChange?.(this.current());
  }
}
