// Lets the person hand their own files to the file tools: drag-and-drop or a file chooser.
import { el, icon, setChildren } from "./dom.js";
import { formatBytes } from "./format.js";
import { ICONS } from "./icons.js";

export const READABLE_EXTENSIONS = [".txt", ".md", ".markdown", ".csv", ".json"];
const MAX_FILE_BYTES = 5_000_000;

/** Splits files into those the tools can read and the reasons the others were refused. */
export function sortFiles(files) {
  const accepted = [];
  const refused = [];
  for (const file of files) {
    const lower = file.name.toLowerCase();
    if (!READABLE_EXTENSIONS.some((ext) => lower.endsWith(ext))) {
      refused.push(`${file.name}: only ${READABLE_EXTENSIONS.join(", ")} files can be read`);
    } else if (file.size > MAX_FILE_BYTES) {
      refused.push(`${file.name}: larger than ${formatBytes(MAX_FILE_BYTES)}`);
    } else {
      accepted.push(file);
    }
  }
  return { accepted, refused };
}

export class FileDrop {
  /** onFiles(files) -> Promise: hands accepted File objects to the agent. */
  constructor({ zone, input, list, onFiles, onRefused }) {
    this.zone = zone;
    this.list = list;
    this.onFiles = onFiles;
    this.onRefused = onRefused;
    this.files = [];
    input.addEventListener("change", () => {
      this.#take([...input.files]);
      input.value = "";
    });
    for (const type of ["dragenter", "dragover"]) {
      zone.addEventListener(type, (event) => {
        event.preventDefault();
        zone.dataset.dragging = "true";
      });
    }
    zone.addEventListener("dragleave", () => delete zone.dataset.dragging);
    zone.addEventListener("drop", (event) => {
      event.preventDefault();
      delete zone.dataset.dragging;
      this.#take([...(event.dataTransfer?.files || [])]);
    });
    // The whole window accepts a drop too, so a near miss does not open the file in the tab.
    window.addEventListener("dragover", (event) => event.preventDefault());
    window.addEventListener("drop", (event) => {
      if (event.defaultPrevented) return;
      event.preventDefault();
      this.#take([...(event.dataTransfer?.files || [])]);
    });
  }

  async #take(files) {
    if (!files.length) return;
    const { accepted, refused } = sortFiles(files);
    if (refused.length) this.onRefused?.(refused);
    if (!accepted.length) return;
    try {
      await this.onFiles(accepted);
      this.files.push(...accepted);
      this.#render();
    } catch (error) {
      this.onRefused?.([error.message || String(error)]);
    }
  }

  #render() {
    setChildren(this.list, this.files.map((file) =>
      el("li", {}, icon(ICONS.file), el("span", { class: "file-name" }, file.name),
        el("span", { class: "hint" }, formatBytes(file.size)))));
  }
}
