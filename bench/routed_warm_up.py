"""How much grammar compile the warm-up takes off a routed turn's first token (agent-host.js warmUp,
py/botpsy_agent/topic_routing.py): warms an agent on an exported folder, then runs turns naming one
topic (warmed) and two topics (not warmed), and prints each turn's grammar compile at its first token.

    .venv/bin/python bench/routed_warm_up.py DIR
"""

import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from botpsy_web.build_py import build_agent_bundle
from botpsy_web.serve import serve_in_background
from botpsy_web.verify_browser import CHROMIUM_ARGS, CHROMIUM_PATH

TURNS = ("add oat milk to my todos", "what's on my calendar tomorrow?", "put oat milk in a note and on my todos")


def main(folder: Path):
    if not (folder / "manifest.json").is_file():
        sys.exit(f"error: {folder} has no manifest.json: pass a folder written by `botpsy-web export`")
    build_agent_bundle()
    httpd, base_url = serve_in_background(models_dir=folder.parent)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.set_default_timeout(600_000)
            page.goto(base_url + "/tests/pages/agent-host.html")
            page.evaluate("options => window.startAgent(options)", {
                "modelUrl": f"/models/{folder.name}/", "storeName": "bench-routed", "thinking": False,
                "settings": {"maxTokens": 8, "temperature": 0, "maxSteps": 1}})
            started = time.monotonic()
            warmed = page.evaluate("() => window.agentTest.agent.warmUp()")
            print(f"warm-up {time.monotonic() - started:.2f} s: prefill {warmed['prefillMs'] / 1000:.2f} s of "
                  f"{warmed['promptTokens']} tokens, then {warmed['routedGrammars']} routed grammars compiled")
            for text in TURNS:
                turn = page.evaluate("text => window.runTurn(text)", text)
                topics = turn["final"].get("first_step_tools", {}).get("topics")
                print(f"{text!r}: topics {topics}, grammar compile at the first token "
                      f"{turn['stats'].get('grammarCompileMs')} ms")
            browser.close()
    finally:
        httpd.shutdown()
        httpd.server_close()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]).resolve())
