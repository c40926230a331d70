// The page's tools, offered to the browser's own agents through WebMCP (docs/webmcp.md).
//
// Off until the person turns it on (settings: #offer-webmcp) or the site's owner did
// (`build-site --webmcp`): such an agent may be a cloud model that sends what it reads to its own
// servers. What is offered is exactly what the model sees now, with the agent's own schemas
// (py/botpsy_agent/outside_calls.py offered_tools); turning a tool off withdraws it. A call runs
// through the agent like the model's (argument checks, the page's confirmation, provenance) and
// shows a card in the chat saying an outside agent asked; a denial is an error result.
import { modelContextOf, offerTool } from "./model-context.js";

/** A tool's offer changes when its name, description, schema or kind does. */
const offerKey = (tool) => JSON.stringify([tool.description, tool.parameters, Boolean(tool.read_only)]);

export class ToolOffer {
  /**
   * session: an AssistantSession (offeredTools, callForOutsideAgent). exclude(): names not to
   * offer (tools that came from the page's own WebMCP tools, page-tools.js).
   */
  constructor({ session, context = modelContextOf(), exclude = () => new Set() }) {
    this.session = session;
    this.context = context;
    this.exclude = exclude;
    this.offered = new Map(); // name -> {key, withdraw}
    this.registering = new Set(); // names on their way in: already ours for page-tools.js
    this.on = false;
    this.syncing = Promise.resolve();
  }

  /** Whether this browser has WebMCP at all (without it nothing is ever registered). */
  get available() {
    return Boolean(this.context);
  }

  /** The names offered now (or being offered). */
  names() {
    return new Set([...this.offered.keys(), ...this.registering]);
  }

  /** Offers the enabled tools when `on`, nothing when not; call again after any change of tools or model. */
  update(on) {
    this.on = Boolean(on);
    this.syncing = this.syncing.then(() => this.#sync())
      .catch((error) => console.warn(`BotPsy: could not update the tools offered to the browser's agents (${error.message})`));
    return this.syncing;
  }

  async #sync() {
    if (!this.context) return;
    const excluded = this.exclude();
    const tools = this.on && this.session.ready
      ? (await this.session.offeredTools()).filter((tool) => !excluded.has(tool.name)) : [];
    const wanted = new Map(tools.map((tool) => [tool.name, tool]));
    for (const [name, entry] of this.offered) {
      if (wanted.has(name) && offerKey(wanted.get(name)) === entry.key) continue;
      entry.withdraw();
      this.offered.delete(name);
    }
    for (const tool of tools) {
      if (this.offered.has(tool.name)) continue;
      this.registering.add(tool.name);
      try {
        const withdraw = await offerTool(this.context, {
          name: tool.name,
          description: tool.description,
          inputSchema: tool.parameters,
          readOnly: tool.read_only,
          execute: (args) => this.#call(tool.name, args),
        });
        this.offered.set(tool.name, { key: offerKey(tool), withdraw });
      } catch (error) {  // e.g. another script of this page registered the name first
        console.warn(`BotPsy: could not offer ${tool.name} to the browser's agents (${error.message})`);
      } finally {
        this.registering.delete(tool.name);
      }
    }
  }

  async #call(name, args) {
    try {
      const answer = await this.session.callForOutsideAgent(name, args);
      return { text: answer.result, isError: !answer.ok };
    } catch (error) {
      return { text: `Error: Unavailable: ${error.message}`, isError: true };
    }
  }
}

/** Whether the site's owner turned the offer on for every visitor (`botpsy-web build-site --webmcp`
 * writes this meta tag into the page; a URL parameter never can). The person can still turn it off. */
export function siteOffersTools(doc = globalThis.document) {
  return doc?.querySelector?.('meta[name="botpsy-webmcp"]')?.getAttribute("content") === "offer";
}
