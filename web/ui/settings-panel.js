// Settings the person controls: thinking, temperature, which tools, network access.
// Kept in localStorage so they survive a reload.
import { el, setChildren } from "./dom.js";

const STORAGE_KEY = "botpsy.settings.v1";
export const DEFAULT_SETTINGS = Object.freeze({
  thinking: false,
  temperature: 0.7,
  disabledTools: [],
  allowNetwork: false,
});

export function loadSettings(storage = globalThis.localStorage) {
  try {
    const saved = JSON.parse(storage?.getItem(STORAGE_KEY) || "{}");
    return { ...DEFAULT_SETTINGS, ...saved };
  } catch {
    return { ...DEFAULT_SETTINGS };
  }
}

export function saveSettings(settings, storage = globalThis.localStorage) {
  try {
    storage?.setItem(STORAGE_KEY, JSON.stringify(settings));
  } catch {
    // Private windows can refuse storage; settings then last for this visit only.
  }
}

/** What AgentHost.setSettings expects, given the tool names the agent offers. */
export function agentSettings(settings, toolNames) {
  const chosen = {
    thinking: settings.thinking,
    temperature: settings.temperature,
    allowNetwork: settings.allowNetwork,
  };
  // Until the agent has listed its tools, leave its own default (every tool) alone.
  if (toolNames.length) chosen.enabledTools = toolNames.filter((name) => !settings.disabledTools.includes(name));
  return chosen;
}

export class SettingsPanel {
  constructor({ thinking, temperature, temperatureValue, toolToggles, toolCount, network, onChange }) {
    this.inputs = { thinking, temperature, temperatureValue, toolToggles, toolCount, network };
    this.onChange = onChange;
    this.settings = loadSettings();
    this.toolNames = [];
    thinking.checked = this.settings.thinking;
    temperature.value = String(this.settings.temperature);
    temperatureValue.textContent = this.settings.temperature.toFixed(2);
    network.checked = this.settings.allowNetwork;
    thinking.addEventListener("change", () => this.#update({ thinking: thinking.checked }));
    temperature.addEventListener("input", () => {
      temperatureValue.textContent = Number(temperature.value).toFixed(2);
      this.#update({ temperature: Number(temperature.value) });
    });
    network.addEventListener("change", () => this.#update({ allowNetwork: network.checked }));
    this.showTools([]);
  }

  /** tools: [{name, description}] as the agent lists them. */
  showTools(tools) {
    this.toolNames = tools.map((t) => t.name);
    this.#countTools();
    if (!tools.length) {
      setChildren(this.inputs.toolToggles, el("p", { class: "hint" }, "The tool list appears once a model is loaded."));
      return;
    }
    setChildren(this.inputs.toolToggles, tools.map((tool) => {
      const input = el("input", {
        type: "checkbox", value: tool.name,
        checked: !this.settings.disabledTools.includes(tool.name),
        onchange: () => {
          const disabled = new Set(this.settings.disabledTools);
          if (input.checked) disabled.delete(tool.name);
          else disabled.add(tool.name);
          this.#update({ disabledTools: [...disabled] });
          this.#countTools();
        },
      });
      return el("label", { class: "tool-toggle", title: tool.description || "" },
        input, el("span", {}, tool.name));
    }));
  }

  #countTools() {
    if (!this.inputs.toolCount) return;
    const on = this.toolNames.filter((name) => !this.settings.disabledTools.includes(name)).length;
    this.inputs.toolCount.textContent = this.toolNames.length ? `(${on} of ${this.toolNames.length} on)` : "";
  }

  current() {
    return agentSettings(this.settings, this.toolNames);
  }

  #update(change) {
    this.settings = { ...this.settings, ...change };
    saveSettings(this.settings);
    this.onChange?.(this.current());
  }
}
