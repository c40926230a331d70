// Loads the tools package into Pyodide (Node, local files only) and runs every tool once.
// Usage: node pyodide_smoke.mjs <repo root>. Prints one JSON line: the Python report.
import { loadPyodide } from "../../../node_modules/pyodide/pyodide.mjs";
import path from "node:path";

const root = path.resolve(process.argv[2] ?? ".");
const pyodide = await loadPyodide({ indexURL: path.join(root, "node_modules/pyodide/") });
pyodide.FS.mkdir("/py");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: path.join(root, "py") }, "/py");
const report = await pyodide.runPythonAsync(`
import sys, json, asyncio, time
sys.path.insert(0, "/py")
started = time.monotonic()
from botpsy_agent.tooling import ToolContext, ToolError
from botpsy_agent.tools import builtin_tools, add_user_file
import_seconds = time.monotonic() - started
import zoneinfo
try:
    zoneinfo.ZoneInfo("Europe/Paris")
    system_tz = True
except zoneinfo.ZoneInfoNotFoundError:
    system_tz = False
ctx = ToolContext()
tools = {tool.name: tool for tool in builtin_tools()}
async def call(name, **arguments):
    try:
        return await tools[name].call(ctx, arguments)
    except ToolError as error:
        return "ToolError: " + str(error)
async def main():
    await add_user_file(ctx.store, "list.csv", "item,qty\\nmilk,2\\neggs,12\\n", "text/csv")
    return {
        "python": sys.version.split()[0],
        "tools": len(tools),
        "import_seconds": round(import_seconds, 2),
        "system_tz": system_tz,
        "calculator": await call("calculator", expression="0.1 + 0.2"),
        "convert_time": await call("convert_time", time="2026-07-01T12:00", from_timezone="Europe/Paris",
                                   to_timezone="America/New_York"),
        "convert_units": await call("convert_units", value=5, from_unit="mi", to_unit="km"),
        "notes_create": await call("notes_create", text="Pyodide note"),
        "notes_search": await call("notes_search", query="pyodide"),
        "calendar_add_event": await call("calendar_add_event", title="Test", start="2026-12-01T10:00"),
        "calendar_export_ics": (await call("calendar_export_ics"))["events"],
        "todo_add": await call("todo_add", text="smoke", due="2026-12-01"),
        "files_search": await call("files_search", query="eggs"),
        "run_python": await call("run_python", code="import statistics\\nstatistics.mean([1, 2, 3, 4])"),
        "search_docs": [hit["document"] for hit in await call("search_docs", query="privacy network")],
        "outbox_draft": await call("outbox_draft", to="Ann", body="hi"),
        "fetch_url": await call("fetch_url", url="https://example.org/"),
    }
json.dumps(await main())
`);
console.log(report);
