"""Fixtures for WebMCP: Debian's Chromium started with --enable-features=WebMCP (its own browser,
so no other test runs with the flag), the scripted model (tests/product/scripted-model-worker.js),
and an async page for the tests where a browser agent's call must wait while the person clicks
in the page (Playwright's sync `webmcp.call_tool` would block the click)."""

import asyncio
import json
import re
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

WEBMCP_FLAG = "--enable-features=WebMCP"
MODEL = "tiny-qwen3.5"  # its folder gives the real chat template and tool-call format
SCRIPTED_WORKER = Path(__file__).parent.parent / "product" / "scripted-model-worker.js"
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


def scripted_worker_body(script, model_folder):
    """The scripted model worker for `script` ([{match, outputs}]), with the folder's manifest built in."""
    manifest = json.loads((Path(model_folder) / "manifest.json").read_text())
    return f"const SCRIPT = {json.dumps(script)};\nconst MANIFEST = {json.dumps(manifest)};\n{SCRIPTED_WORKER.read_text()}"


def origin(url):
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@pytest.fixture(scope="session")
def webmcp_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "args": [*browser_type_launch_args["args"], WEBMCP_FLAG]}


@pytest.fixture(scope="module")
def webmcp_browser(browser_type, webmcp_launch_args):
    """A sync Chromium with WebMCP on (pytest-playwright's `browser` stays without it)."""
    browser = browser_type.launch(**webmcp_launch_args)
    yield browser
    browser.close()


@pytest.fixture(scope="session")
def model_folder(exported_model):
    return exported_model(MODEL)


def run_async(scenario):
    """Runs `scenario()` (a coroutine function) to its end on a thread of its own: pytest-playwright's
    sync API keeps an event loop running on this one. Its exception is raised here."""
    outcome = {}

    def main():
        try:
            outcome["value"] = asyncio.run(scenario())
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            outcome["error"] = error

    thread = threading.Thread(target=main, name="webmcp-async")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


class AsyncApp:
    """The app's page in an async Chromium with WebMCP on, loaded with the scripted model.
    `requests` records every URL the context asked for; `errors` every page error."""

    def __init__(self, launch_args, server, folder, script, page_bytes=None, query=""):
        self.launch_args, self.server, self.folder, self.script = launch_args, server, folder, script
        self.query = query
        self.page_bytes = page_bytes  # served for the app's address instead of index.html
        self.requests, self.errors = [], []

    async def __aenter__(self):
        from playwright.async_api import async_playwright

        self.playwright = await async_playwright().start()
        self.browser = await self.playwright.chromium.launch(**self.launch_args)
        self.context = await self.browser.new_context(service_workers="block")
        self.context.on("request", lambda request: self.requests.append(request.url))
        body = scripted_worker_body(self.script, self.folder)

        async def worker(route):
            await route.fulfill(status=200, body=body, content_type="text/javascript", headers=ISOLATION_HEADERS)

        await self.context.route("**/web/runtime/model-worker.js", worker)
        if self.page_bytes is not None:
            async def app_page(route):
                response = await route.fetch()
                await route.fulfill(response=response, body=self.page_bytes)

            await self.context.route(f"{self.server}/{self.query}", app_page)
        self.page = await self.context.new_page()
        self.page.set_default_timeout(120_000)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.response = await self.page.goto(f"{self.server}/{self.query}")
        return self

    async def load_model(self):
        page = self.page
        await page.get_by_role("radio", name=re.compile(rf"^{re.escape(MODEL)}(\s|$)")).check()
        await page.get_by_role("button", name="Load model").click()
        await page.locator("#load-progress[data-state='ready']").wait_for()

    async def offered(self):
        return {tool["name"]: tool for tool in await self.page.webmcp.tools()}

    async def wait_until_offered(self, expected):
        """Waits until the browser's agents are offered exactly the names in `expected`."""
        for _ in range(200):
            offered = await self.offered()
            if set(offered) == set(expected):
                return offered
            await self.page.wait_for_timeout(50)
        raise AssertionError(f"offered {sorted(offered)}, expected {sorted(expected)}")

    def foreign_requests(self):
        return [url for url in self.requests
                if not url.startswith(("data:", "blob:", "about:")) and origin(url) != self.server]

    async def __aexit__(self, *exc):
        await self.browser.close()
        await self.playwright.stop()


@pytest.fixture
def async_app(webmcp_launch_args, server, model_folder, agent_bundle):
    """async_app(script, page_bytes=None, query="") -> an AsyncApp to use with `async with` inside run_async."""
    return lambda script, **options: AsyncApp(webmcp_launch_args, server, model_folder, script, **options)
