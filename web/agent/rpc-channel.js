// Calls in both directions over one postMessage port (the page <-> the agent worker).
//
//   {kind: "call", id, name, args}             ask the other side to run `name`
//   {kind: "reply", id, result} | {kind: "reply", id, error: {name, message}}
//   {kind: "event", event}                      one-way news (agent events)
//
// Each side registers the names it answers; a call to an unknown name is an error reply.

export class RpcChannel {
  constructor(port, handlers = {}, onEvent = () => {}) {
    this.port = port;
    this.handlers = handlers;
    this.onEvent = onEvent;
    this.nextId = 1;
    this.pending = new Map();
    port.onmessage = ({data}) => this.#receive(data);
  }

  call(name, args = {}) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, {resolve, reject});
      this.port.postMessage({kind: "call", id, name, args});
    });
  }

  sendEvent(event) {
    this.port.postMessage({kind: "event", event});
  }

  /** Rejects every call still waiting (the other side is gone). */
  failAll(error) {
    for (const {reject} of this.pending.values()) reject(error);
    this.pending.clear();
  }

  async #receive(message) {
    if (message?.kind === "event") { this.onEvent(message.event); return; }
    if (message?.kind === "reply") {
      const entry = this.pending.get(message.id);
      if (!entry) return;
      this.pending.delete(message.id);
      if (message.error) entry.reject(Object.assign(new Error(message.error.message), {name: message.error.name}));
      else entry.resolve(message.result);
      return;
    }
    if (message?.kind !== "call") return;
    const {id, name, args} = message;
    try {
      const handler = this.handlers[name];
      if (!handler) throw new Error(`no handler for "${name}"`);
      this.port.postMessage({kind: "reply", id, result: await handler(args)});
    } catch (error) {
      this.port.postMessage({kind: "reply", id, error: {name: error?.name ?? "Error", message: error?.message ?? String(error)}});
    }
  }
}
