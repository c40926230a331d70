// The one module that touches WebMCP (a W3C Web Machine Learning CG draft): a page offers
// tools to the browser's own AI agents, and reads the tools its page offers.
//
// Measured in Chromium 156 with --enable-features=WebMCP (docs/webmcp.md): `document.modelContext`
// (not navigator's) on secure contexts; registerTool(tool, {signal}) returns a promise (rejected:
// "Duplicate tool name", "Invalid tool name"), and aborting the signal unregisters; getTools()
// lists fresh records {name, description, inputSchema, annotations, origin, window, ...};
// executeTool(record, argumentsObject) resolves to the JSON text of what execute() returned and
// rejects with an UnknownError when execute threw or the tool is gone; "toolchange" fires on
// every change. The draft still moves (Chrome 160: Tool objects, `source` instead of `window`),
// so everything is feature-detected and every field is read explicitly, here and nowhere else.

/** The page's model context, or null where the browser has none (nothing then changes). */
export function modelContextOf(doc = globalThis.document) {
  const context = doc?.modelContext;
  const usable = context && ["registerTool", "getTools", "executeTool"].every((name) => typeof context[name] === "function");
  return usable ? context : null;
}

/** An MCP-style tool result: what an outside agent reads, and isError for a refusal or failure. */
export function textResult(text, isError = false) {
  return {content: [{type: "text", text: String(text)}], isError: Boolean(isError)};
}

/**
 * Offers one tool to the browser's agents: {name, description, inputSchema, readOnly, execute(args)}.
 * execute returns {text, isError}. Resolves to a function that withdraws the tool.
 */
export async function offerTool(context, {name, description, inputSchema, readOnly, execute}) {
  const controller = new AbortController();
  await context.registerTool({
    name,
    description,
    inputSchema,
    annotations: {readOnlyHint: Boolean(readOnly)},
    execute: async (args) => {
      const {text, isError} = await execute(args && typeof args === "object" ? args : {});
      return textResult(text, isError);
    },
  }, {signal: controller.signal});
  return () => controller.abort();
}

/**
 * The tools this page registered: [{name, description, inputSchema, readOnly}]. Tools of other
 * origins (frames) are left out: only the page's own scripts speak for it.
 */
export async function pageTools(context, origin = globalThis.location?.origin) {
  const listed = await context.getTools();
  const tools = [];
  for (const entry of listed ?? []) {
    const tool = readTool(entry);
    if (!tool) continue;
    if (typeof entry.origin === "string" && origin && entry.origin !== origin) continue;
    tools.push(tool);
  }
  return tools;
}

function readTool(entry) {
  const name = entry?.name;
  if (typeof name !== "string" || !name) return null;
  let inputSchema = entry.inputSchema;
  if (typeof inputSchema === "string") {  // older drafts kept it as JSON text
    try { inputSchema = JSON.parse(inputSchema); } catch { inputSchema = null; }
  }
  return {
    name,
    description: typeof entry.description === "string" ? entry.description : "",
    inputSchema: inputSchema && typeof inputSchema === "object" ? inputSchema : {type: "object", properties: {}},
    readOnly: entry.annotations?.readOnlyHint === true,
  };
}

/** A page tool that is no longer registered. */
export class ToolGoneError extends Error {
  constructor(name) {
    super(`the page no longer offers the tool ${name} (it was removed)`);
    this.name = "ToolGone";
  }
}

/**
 * Runs one of the page's tools by name; resolves to its result (parsed JSON; an MCP result's text
 * parts joined), throws ToolGoneError when it is gone and an Error with its text when it failed.
 */
export async function callPageTool(context, name, args) {
  const find = async () => [...(await context.getTools()) ?? []].find((entry) => entry?.name === name);
  const entry = await find();
  if (!entry) throw new ToolGoneError(name);
  let raw;
  try {
    raw = await context.executeTool(entry, args);
  } catch (error) {
    if (!(await find())) throw new ToolGoneError(name);
    throw new Error(`the page's tool ${name} failed (${error?.message ?? error})`);
  }
  let value = raw;
  if (typeof raw === "string") {
    try { value = JSON.parse(raw); } catch { value = raw; }
  }
  if (value && typeof value === "object" && Array.isArray(value.content)) {
    const text = value.content.filter((part) => part?.type === "text").map((part) => String(part.text ?? "")).join("\n");
    if (value.isError === true) throw new Error(text || `the page's tool ${name} reported an error`);
    return text;
  }
  return value ?? null;
}

/** Calls listener() on every change of the page's tools; returns a function that stops it. */
export function onToolsChanged(context, listener) {
  if (typeof context.addEventListener !== "function") return () => {};
  context.addEventListener("toolchange", listener);
  return () => context.removeEventListener("toolchange", listener);
}
