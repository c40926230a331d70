"""`botpsy-web prompt-state`: the prompt state shipped with a model folder.

A first visit restores it instead of prefilling the page's default prompt (system prompt and
default tools): web/runtime/state/shipped-prompt-state.js. It is computed from the current code at
build time (`demo` and `build-site` call `ship_prompt_state`), never committed: `key.py` says
whether a folder's state is still current, `compute.py` computes it in headless Chromium through
the app's own warm-up on WASM, so it is the state a WASM visit stores, bit for bit.
"""

from botpsy_web.prompt_state.compute import ShippedState, ship_prompt_state

__all__ = ["ShippedState", "ship_prompt_state"]
