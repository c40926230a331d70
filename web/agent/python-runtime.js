// Loads Pyodide from our own server (no CDN) and unpacks the agent's Python
// (static/build/agent-py.zip, made by `botpsy-web build-py`) into its file system.

const PYODIDE_BASE = new URL("../../node_modules/pyodide/", import.meta.url);
export const AGENT_BUNDLE_URL = new URL("../../static/build/agent-py.zip", import.meta.url);
const AGENT_DIR = "/home/pyodide/botpsy";

let loading = null;

/** One Pyodide per page, shared by every AgentHost; resolves to the pyodide object. */
export function loadAgentPython({bundleUrl = AGENT_BUNDLE_URL} = {}) {
  loading ??= (async () => {
    const {loadPyodide} = await import(new URL("pyodide.mjs", PYODIDE_BASE).href);
    const [pyodide, bundle] = await Promise.all([
      loadPyodide({indexURL: PYODIDE_BASE.href}),
      fetch(bundleUrl).then((response) => {
        if (!response.ok) throw new Error(`the agent's Python bundle is missing (${response.status} for ${bundleUrl}); run \`botpsy-web build-py\``);
        return response.arrayBuffer();
      }),
    ]);
    pyodide.unpackArchive(bundle, "zip", {extractDir: AGENT_DIR});
    pyodide.pyimport("sys").path.insert(0, AGENT_DIR);
    return pyodide;
  })();
  loading.catch(() => { loading = null; });
  return loading;
}
