"""`botpsy-web verify-browser DIR`: does the folder generate the same tokens in the browser?

Runs the exported folder in headless Chromium (web/runtime, onnxruntime-web) and in
onnxruntime for Python on the same prompts, greedy, and compares the two: the share of
generated tokens that agree (up to the first disagreement in each prompt) and the
largest logit difference while both had seen the same tokens. fp32 on WASM must agree
on every token.
"""

import base64
import json
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from botpsy_web.serve import serve_in_background

CHROMIUM_PATH = "/usr/lib/chromium/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-default-apps",
    "--enable-unsafe-webgpu",
]
HARNESS_PATH = "/web/runtime/harness.html"
DEFAULT_PROMPTS = (
    "The capital of France is",
    "<|im_start|>user\nWrite a haiku about the sea.<|im_end|>\n<|im_start|>assistant\n",
    "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
)
NUMPY_DTYPES = {"float32": np.float32, "float16": np.float16, "int64": np.int64, "int32": np.int32}


# --- the folder and its reference run (onnxruntime, Python) --------------------

def read_manifest(folder: Path) -> dict:
    path = Path(folder) / "manifest.json"
    if not path.is_file():
        raise FileNotFoundError(f"{folder} has no manifest.json: is it a folder written by `botpsy-web export`?")
    return json.loads(path.read_text())


def tokenize_prompts(folder: Path, prompts) -> list[list[int]]:
    """Token ids as the browser tokenizes text: as written, no special tokens added."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
    return [tokenizer.encode(text, add_special_tokens=False).ids for text in prompts]


class ReferenceModel:
    """Greedy generation with onnxruntime (CPU), feeds built from the manifest like web/runtime does."""

    def __init__(self, folder: Path, dtype: str):
        import onnxruntime as ort
        from botpsy_export.exact_int8 import exact_int8_session

        manifest = read_manifest(folder)
        if dtype not in manifest["dtypes"]:
            raise ValueError(f"dtype {dtype!r} is not in {folder}; it has {', '.join(manifest['dtypes'])}")
        options = ort.SessionOptions()
        options.log_severity_level = 3
        self.session = exact_int8_session(Path(folder) / manifest["dtypes"][dtype]["file"], options)
        self.manifest = manifest
        self.inputs = manifest.get("inputs", {})
        self.logits_name = manifest.get("outputs", {}).get("logits", "logits")
        shapes = {i.name: i.shape for i in self.session.get_inputs()}
        position_shape = shapes.get(self.inputs.get("position_ids"), [1, "seq"])
        self.position_copies = position_shape[0] if len(position_shape) == 3 and isinstance(position_shape[0], int) else None

    def greedy(self, prompt_ids: list[int], steps: int) -> tuple[list[int], list[np.ndarray]]:
        cache = {e["input"]: np.zeros(e["shape"], NUMPY_DTYPES[e["dtype"]]) for e in self.manifest["cache"]}
        past, new_ids = 0, list(prompt_ids)
        tokens, logits_per_step = [], []
        for _ in range(steps):
            feeds = dict(cache)
            count = len(new_ids)
            feeds[self.inputs["input_ids"]] = np.array([new_ids], np.int64)
            if self.inputs.get("attention_mask"):
                feeds[self.inputs["attention_mask"]] = np.ones((1, past + count), np.int64)
            if self.inputs.get("position_ids"):
                positions = np.arange(past, past + count, dtype=np.int64)[None, :]
                if self.position_copies:
                    positions = np.broadcast_to(positions, (self.position_copies, 1, count)).copy()
                feeds[self.inputs["position_ids"]] = positions
            names = [self.logits_name] + [e["output"] for e in self.manifest["cache"]]
            results = dict(zip(names, self.session.run(names, feeds)))
            logits = results[self.logits_name].reshape(-1, results[self.logits_name].shape[-1])[-1]
            cache = {e["input"]: results[e["output"]] for e in self.manifest["cache"]}
            token = int(np.argmax(logits))
            tokens.append(token)
            logits_per_step.append(logits.astype(np.float32))
            past += count
            new_ids = [token]
        return tokens, logits_per_step


# --- the browser run -------------------------------------------------------------

_BROWSER_RUN = """
async ({folderUrl, backend, dtype, prompts, steps}) => {
  const {ModelClient} = window.botpsyRuntime;
  const client = new ModelClient();
  try {
    const info = await client.load(folderUrl, {backend, dtype});
    const toBase64 = (floats) => {
      const bytes = new Uint8Array(floats.buffer, floats.byteOffset, floats.byteLength);
      let binary = "";
      for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      return btoa(binary);
    };
    const runs = [];
    for (const ids of prompts) {
      const tokens = [], logits = [];
      for await (const chunk of client.generate(ids, {maxTokens: steps, stopOnEos: false, returnLogits: true, reusePrefix: false})) {
        if (chunk.tokenId === null) continue;
        tokens.push(chunk.tokenId);
        logits.push(toBase64(chunk.logits));
      }
      runs.push({tokens, logits});
    }
    return {info: {backend: info.backend, dtype: info.dtype, threads: info.threads, reason: info.reason}, runs};
  } finally {
    client.terminate();
  }
}
"""


@contextmanager
def harness_page(folder: Path):
    """The runtime's harness page in headless Chromium, served with `folder`'s parent as /models/.
    Yields (page, base_url); the browser and the server stop on exit."""
    from playwright.sync_api import sync_playwright

    httpd, base_url = serve_in_background(models_dir=Path(folder).resolve().parent)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page()
                page.set_default_timeout(600_000)
                open_harness(page, base_url)
                yield page, base_url
            finally:
                browser.close()
    finally:
        httpd.shutdown()
        httpd.server_close()


def open_harness(page, base_url: str):
    page.goto(base_url + HARNESS_PATH)
    page.wait_for_function("() => window.botpsyRuntime !== undefined", timeout=60_000)


def run_in_browser(page, folder_url: str, backend: str, dtype: str | None, prompts_ids, steps: int) -> dict:
    """Greedy tokens and per-step logits from web/runtime in an open harness page."""
    result = page.evaluate(_BROWSER_RUN, {"folderUrl": folder_url, "backend": backend, "dtype": dtype,
                                          "prompts": prompts_ids, "steps": steps})
    for run in result["runs"]:
        run["logits"] = [np.frombuffer(base64.b64decode(b), np.float32) for b in run["logits"]]
    return result


# --- comparison ------------------------------------------------------------------

@dataclass
class Agreement:
    backend: str
    dtype: str
    token_agreement: float
    max_abs_logit_diff: float
    prompts: list

    def as_json(self) -> dict:
        return {"backend": self.backend, "dtype": self.dtype, "token_agreement": self.token_agreement,
                "max_abs_logit_diff": self.max_abs_logit_diff}


def compare(backend, dtype, reference_runs, browser_runs) -> Agreement:
    """Tokens agree up to the first difference; logits are compared while the inputs were the same."""
    agreed = total = 0
    max_diff = 0.0
    per_prompt = []
    for (ref_tokens, ref_logits), run in zip(reference_runs, browser_runs):
        matched = 0
        while matched < len(ref_tokens) and matched < len(run["tokens"]) and ref_tokens[matched] == run["tokens"][matched]:
            matched += 1
        compared_steps = min(matched + 1, len(ref_tokens), len(run["tokens"]))
        diff = max((float(np.max(np.abs(ref_logits[i] - run["logits"][i]))) for i in range(compared_steps)), default=0.0)
        max_diff = max(max_diff, diff)
        agreed += matched
        total += len(ref_tokens)
        per_prompt.append({"reference": ref_tokens, "browser": run["tokens"], "agreed": matched, "max_abs_logit_diff": diff})
    return Agreement(backend, dtype, agreed / total if total else 0.0, max_diff, per_prompt)


def verify_in_page(page, base_url: str, folder: Path, backend: str, dtype: str | None, prompts=DEFAULT_PROMPTS,
                   steps: int = 16) -> tuple[Agreement, dict]:
    """Browser run + reference run of `folder` (served at {base_url}/models/{folder.name}/).
    dtype None: the one the runtime picks for the backend; the reference runs the same one."""
    folder = Path(folder)
    prompts_ids = tokenize_prompts(folder, prompts)
    browser = run_in_browser(page, f"{base_url}/models/{folder.name}/", backend, dtype, prompts_ids, steps)
    reference = ReferenceModel(folder, browser["info"]["dtype"])
    reference_runs = [reference.greedy(ids, steps) for ids in prompts_ids]
    return compare(backend, browser["info"]["dtype"], reference_runs, browser["runs"]), browser["info"]


# --- command -----------------------------------------------------------------------

def register(subparsers):
    parser = subparsers.add_parser(
        "verify-browser", help="compare the folder's greedy tokens in headless Chromium with onnxruntime (Python)")
    parser.add_argument("folder", type=Path, metavar="DIR", help="an exported model folder (holds manifest.json)")
    parser.add_argument("--backend", choices=["wasm", "webgpu"], default="wasm", help="onnxruntime-web backend (default wasm)")
    parser.add_argument("--dtype", default="fp32", help="which of the folder's dtypes to run (default fp32)")
    parser.add_argument("--tokens", type=int, default=16, help="greedy tokens per prompt (default 16)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line")
    parser.set_defaults(func=run)


def run(args) -> int:
    folder = args.folder.resolve()
    try:
        manifest = read_manifest(folder)
    except (FileNotFoundError, json.JSONDecodeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.dtype not in manifest.get("dtypes", {}):
        print(f"error: dtype {args.dtype!r} is not in {folder}; it has {', '.join(manifest.get('dtypes', {}))}",
              file=sys.stderr)
        return 2
    from playwright.sync_api import Error as PlaywrightError

    try:
        with harness_page(folder) as (page, base_url):
            agreement, info = verify_in_page(page, base_url, folder, args.backend, args.dtype, steps=args.tokens)
    except PlaywrightError as error:
        # the runtime's own message (e.g. "WebGPU unavailable ...") without the browser stack
        message = str(error).splitlines()[0].removeprefix("Page.evaluate: ").removeprefix("Error: ")
        print(f"error: the browser run failed: {message}", file=sys.stderr)
        return 1

    print(f"{folder.name}: {info['reason']} (dtype {info['dtype']})")
    for index, prompt in enumerate(agreement.prompts):
        print(f"  prompt {index + 1}: {prompt['agreed']}/{len(prompt['reference'])} tokens agree, "
              f"max |logit diff| {prompt['max_abs_logit_diff']:.3g}")
    print(f"token agreement {agreement.token_agreement:.3f}, max |logit diff| {agreement.max_abs_logit_diff:.3g}")
    if args.json:
        print(json.dumps(agreement.as_json()))
    if args.dtype == "fp32" and args.backend == "wasm" and agreement.token_agreement < 1.0:
        print("error: fp32 on WASM must agree with onnxruntime on every token", file=sys.stderr)
        return 1
    return 0
