"""The one door between Python and the browser.

The JavaScript agent host registers a module named `botpsy_host` (with
`pyodide.registerJsModule`) that offers these async capabilities; only strings,
numbers, booleans and None cross the boundary (structured data travels as JSON):

    generate_start(prompt, options_json) -> handle        start a model generation
    generate_next(handle) -> str | None                   next text chunk, None at the end
    generate_close(handle)                                stop a generation left before its end
    store_get(collection, key) -> json | None             IndexedDB
    store_put(collection, key, json)
    store_delete(collection, key) -> bool
    store_items(collection) -> json [[key, value], ...]
    confirm(request_json) -> json {"approved", "arguments"}
    fetch_text(url) -> str
    call_host_tool(name, arguments_json) -> json
    run_python(request_json) -> json                      run_python's sandbox (web/sandbox/): text answer
    emit(event_json)                                      an agent event for the page

`connect()` finds that module in Pyodide; tests pass a fake object with the same
methods. No other module imports `js` or `pyodide`.
"""

from __future__ import annotations

import inspect
import json
import sys
from typing import Any, AsyncIterator

from .storage import Store, check_names, to_json_copy
from .tooling import Tool

IN_BROWSER = sys.platform == "emscripten"
HOST_MODULE = "botpsy_host"


def connect(host: Any = None) -> Any:
    """The host's capabilities: the given fake, or the JS module registered in Pyodide."""
    if host is not None:
        return host
    if not IN_BROWSER:
        raise RuntimeError("no browser host: pass a fake host object when running under CPython")
    import importlib
    return importlib.import_module(HOST_MODULE)


def _js_null() -> Any:
    if not IN_BROWSER:
        return None
    from pyodide.ffi import jsnull  # Pyodide maps JS null to jsnull, not None
    return jsnull


JS_NULL = _js_null()


async def _result(value: Any) -> Any:
    """A host call's result, whether the host answered at once or with a promise;
    JS null and undefined both become None."""
    value = await value if inspect.isawaitable(value) else value
    return None if value is JS_NULL else value


class BridgeModel:
    """The runtime's ModelClient, seen as the loop's Model."""

    def __init__(self, host: Any):
        self.host = host

    async def generate(self, prompt: str, options: dict) -> AsyncIterator[str]:
        handle = await _result(self.host.generate_start(prompt, json.dumps(options)))
        finished = False
        try:
            while True:
                chunk = await _result(self.host.generate_next(handle))
                if chunk is None:
                    finished = True
                    return
                yield str(chunk)
        finally:
            if not finished:  # left early (an error, a stop): the page must stop generating too
                await _result(self.host.generate_close(handle))


class BridgeStore(Store):
    """IndexedDB through the host; values travel as JSON text."""

    def __init__(self, host: Any):
        self.host = host

    async def get(self, collection, key):
        check_names(collection, key)
        text = await _result(self.host.store_get(collection, key))
        return None if text is None else json.loads(text)

    async def put(self, collection, key, value):
        check_names(collection, key)
        await _result(self.host.store_put(collection, key, json.dumps(to_json_copy(value))))

    async def delete(self, collection, key):
        check_names(collection, key)
        return bool(await _result(self.host.store_delete(collection, key)))

    async def items(self, collection):
        check_names(collection)
        pairs = json.loads(await _result(self.host.store_items(collection)))
        return sorted((str(key), value) for key, value in pairs)


def bridge_fetch(host: Any):
    async def fetch(url: str) -> str:
        return str(await _result(host.fetch_text(url)))
    return fetch


def bridge_run_python(host: Any):
    """run_python's sandbox on the page (the agent worker cannot create its frame)."""
    async def run_python(request) -> dict:
        return json.loads(await _result(host.run_python(json.dumps(request.to_json_dict()))))
    return run_python


def bridge_confirm(host: Any):
    async def confirm(request: dict) -> dict:
        answer = json.loads(await _result(host.confirm(json.dumps(request))))
        return answer if isinstance(answer, dict) else {"approved": False}
    return confirm


def host_tool(host: Any, spec: dict) -> Tool:
    """A tool whose handler is the host page's JavaScript function."""
    name = spec.get("name")

    async def handler(arguments: dict) -> Any:
        return json.loads(await _result(host.call_host_tool(name, json.dumps(arguments))))

    return Tool.from_json_schema(name, spec.get("description", ""),
                                 spec.get("parameters") or {"type": "object", "properties": {}},
                                 handler, side_effects=bool(spec.get("side_effects", True)),
                                 untrusted_output=bool(spec.get("untrusted_output", False)),
                                 sends_elsewhere=True)


def emit_to(host: Any):
    def emit(event: dict) -> None:
        host.emit(json.dumps(event, ensure_ascii=False, default=str))
    return emit
