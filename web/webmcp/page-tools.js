// A page's own WebMCP tools, offered to BotPsy's model beside the host tools of web/WIDGET.md:
// a site that already speaks WebMCP gets an on-device assistant for its actions with no
// BotPsy-specific code (docs/webmcp.md).
//
// Each tool is a host tool of the agent (web/agent/agent-host.js registerTool): acting, so behind
// the confirmation gate, unless the page marked it readOnlyHint; its results are third-party
// text, marked as data for the model; a name that clashes with one of BotPsy's tools gets the
// "page_" prefix. getTools() is read again on every toolchange: a tool that went away is
// unregistered, and a call to it in flight answers the model with an error (ToolGoneError).
import { callPageTool, modelContextOf, onToolsChanged, pageTools } from "./model-context.js";

export const CLASH_PREFIX = "page_";
const toolKey = (tool) => JSON.stringify([tool.description, tool.inputSchema, tool.readOnly]);

/** A WebMCP name as an agent tool name: letters, digits and "_" (what every call format can carry). */
export function agentToolName(name) {
  const safe = name.replace(/[^A-Za-z0-9_]/g, "_").slice(0, 64);
  return /^[A-Za-z_]/.test(safe) ? safe : `_${safe}`;
}

export class PageTools {
  /**
   * session: an AssistantSession (tools, registerTool, unregisterTool), its model loaded before start().
   * skip(): WebMCP names not to take (BotPsy's own offer, tools the page gave the widget directly).
   * onChange(names): after tools came or went, with the agent's names of those taken.
   */
  constructor({ session, context = modelContextOf(), skip = () => new Set(), onChange = () => {} }) {
    this.session = session;
    this.context = context;
    this.skip = skip;
    this.onChange = onChange;
    this.taken = new Map(); // agent name -> {source (the WebMCP name), key}
    this.refreshing = Promise.resolve();
    this.stopListening = null;
  }

  get available() {
    return Boolean(this.context);
  }

  /** The agent's names of the page tools taken now. */
  names() {
    return [...this.taken.keys()];
  }

  /** Takes the page's tools now and follows their changes; nothing where WebMCP does not exist. */
  start() {
    if (!this.context || this.stopListening) return this.refreshing;
    this.stopListening = onToolsChanged(this.context, () => this.refresh());
    return this.refresh();
  }

  stop() {
    this.stopListening?.();
    this.stopListening = null;
  }

  refresh() {
    this.refreshing = this.refreshing.then(() => this.#refresh())
      .catch((error) => console.warn(`BotPsy: could not read this page's WebMCP tools (${error.message})`));
    return this.refreshing;
  }

  async #refresh() {
    const all = await pageTools(this.context);
    const skipped = this.skip(); // after the wait: what BotPsy offered meanwhile is its own
    const listed = all.filter((tool) => !skipped.has(tool.name));
    const current = new Map(listed.map((tool) => [tool.name, tool]));
    let changed = false;
    for (const [name, entry] of this.taken) {
      const tool = current.get(entry.source);
      if (tool && toolKey(tool) === entry.key) continue;
      this.taken.delete(name);
      // Given to the widget's registerTool since, under this very name: that registration replaced ours.
      if (!(name === entry.source && skipped.has(entry.source))) this.session.unregisterTool(name);
      changed = true;
    }
    const sources = new Set([...this.taken.values()].map((entry) => entry.source));
    for (const tool of listed) {
      if (sources.has(tool.name)) continue;
      const name = this.#nameFor(tool.name);
      try {
        this.session.registerTool({
          name,
          description: tool.description,
          parameters: tool.inputSchema,
          handler: (args) => callPageTool(this.context, tool.name, args),
          confirm: !tool.readOnly,
          sideEffects: !tool.readOnly,
          untrustedOutput: true, // written by the page (maybe by any script on it): data, not instructions
        });
        this.taken.set(name, { source: tool.name, key: toolKey(tool) });
        changed = true;
      } catch (error) {
        console.warn(`BotPsy: this page's WebMCP tool ${tool.name} cannot be offered to the assistant (${error.message})`);
      }
    }
    if (changed) this.onChange(this.names());
  }

  /** Its own name when free; else "page_" + it (then a number) so that it never replaces one of ours. */
  #nameFor(source) {
    const ours = new Set(this.session.tools().map((tool) => tool.name).filter((name) => !this.taken.has(name)));
    const base = agentToolName(source);
    if (!ours.has(base) && !this.taken.has(base)) return base;
    let name = `${CLASH_PREFIX}${base}`;
    for (let n = 2; ours.has(name) || this.taken.has(name); n += 1) name = `${CLASH_PREFIX}${base}_${n}`;
    return name;
  }
}
