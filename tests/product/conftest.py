"""Fixtures for the product tests: the app server and helpers for looking at the page."""

import json
from pathlib import Path

import pytest

from botpsy_web.app_page import open_app_with_model, wait_until_offline_ready


@pytest.fixture(scope="session")
def app_server(server):
    """Base URL of the app (the shared test server: it allows the service worker at the root scope)."""
    return server


@pytest.fixture
def first_visit_offline_ready(browser, open_guarded_page, app_server, exported_model, agent_bundle):
    """first_visit_offline_ready(name) -> (context, page, guard): a first visit that loads the exported
    model `name` on WASM and waits until the service worker holds what the app needs offline."""
    def visit(name: str, timeout_ms: int = 120_000):
        exported_model(name)
        context, page, guard = open_guarded_page(browser, app_server)
        page.set_default_timeout(timeout_ms)
        open_app_with_model(page, app_server, name, backend="wasm")
        wait_until_offline_ready(page)
        return context, page, guard
    return visit


@pytest.fixture(scope="session")
def horizontal_overflow():
    """horizontal_overflow(page) -> elements sticking out of the viewport (what makes a phone scroll sideways)."""
    return lambda page: page.evaluate(OVERFLOW_SCRIPT)


OVERFLOW_SCRIPT = """() => {
        const width = document.documentElement.clientWidth;
        const wide = [];
        if (document.documentElement.scrollWidth > width) wide.push(`document ${document.documentElement.scrollWidth}px`);
        for (const node of document.querySelectorAll('body *')) {
            const box = node.getBoundingClientRect();
            if (box.width && (box.right > width + 1 || box.left < -1) && getComputedStyle(node).position !== 'fixed'
                && !node.closest('.visually-hidden, [hidden], dialog:not([open])')) {
                wide.push(`${node.tagName.toLowerCase()}${node.id ? '#' + node.id : ''}.${node.className} right=${Math.round(box.right)}`);
            }
        }
        return wide.slice(0, 10);
    }"""


# --- the SCRIPTED model (tests/product/scripted-model-worker.js), served in place of the
# runtime's worker with the outputs a test chose ----------------------------------------



WORKER_SOURCE = (Path(__file__).parent / "scripted-model-worker.js").read_text()
ISOLATION_HEADERS = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "cross-origin",
    "Access-Control-Allow-Origin": "*",
}


def xml_call(tool_name, **arguments):
    """A tool call as BotPsy (Qwen3-Coder XML) writes it."""
    parameters = "".join(f"<parameter={key}>\n{value}\n</parameter>\n" for key, value in arguments.items())
    return f"<tool_call>\n<function={tool_name}>\n{parameters}</function>\n</tool_call>"


def route_scripted_model(context, script, model_folder=None):
    """script: [{"match": text in the user's message, "outputs": [one output per step]}].
    model_folder: its manifest is built in, so the scripted model loads with the network off."""
    manifest = json.loads((Path(model_folder) / "manifest.json").read_text()) if model_folder else None
    body = f"const SCRIPT = {json.dumps(script)};\nconst MANIFEST = {json.dumps(manifest)};\n{WORKER_SOURCE}"

    def fulfill(route):
        route.fulfill(status=200, body=body, content_type="text/javascript", headers=ISOLATION_HEADERS)

    context.route("**/web/runtime/model-worker.js", fulfill)


@pytest.fixture(scope="session")
def scripted_model():
    """scripted_model(context, script) routes the runtime's worker to the scripted one."""
    return route_scripted_model


@pytest.fixture(scope="session")
def tool_call_text():
    return xml_call


def drop_files(page, files):
    """Drops files on the page's drop zone, as a person dragging them from the desktop does.
    files: (name, type, content) with content text or bytes."""
    page.evaluate("""(files) => {
        const transfer = new DataTransfer();
        for (const [name, type, text, bytes] of files) {
            transfer.items.add(new File([bytes === null ? text : new Uint8Array(bytes)], name, {type}));
        }
        const zone = document.getElementById('drop-zone');
        for (const type of ['dragenter', 'dragover', 'drop']) {
            zone.dispatchEvent(new DragEvent(type, {dataTransfer: transfer, bubbles: true, cancelable: true}));
        }
    }""", [[name, type, content, None] if isinstance(content, str) else [name, type, None, list(content)]
           for name, type, content in files])
