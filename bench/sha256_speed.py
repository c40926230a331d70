"""How fast the model-file integrity check hashes in headless Chromium: crypto.subtle and the
portable incremental SHA-256 of web/runtime/storage/sha256.js (used where crypto.subtle is missing
and for files over SUBTLE_DIGEST_MAX_BYTES, such as fp32 0.5B weights), in a page and in a module
worker (where the runtime hashes), on the same random bytes. Prints MB/s and what a file of
--file-gb costs on each load.

    .venv/bin/python bench/sha256_speed.py [--mib 256] [--file-gb 2.52]
"""

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

from botpsy_web.verify_browser import harness_page

MEASURE = """
async (mib) => {
  const source = `
    import {Sha256, sha256Hex} from "${location.origin}/web/runtime/storage/sha256.js";
    export async function measure(mib) {
      const bytes = new Uint8Array(mib * 2 ** 20);
      for (let at = 0; at < bytes.length; at += 65536) crypto.getRandomValues(bytes.subarray(at, at + 65536));
      const rate = async (hash) => { const t = performance.now(); const digest = await hash(); return [bytes.length / 1e6 / ((performance.now() - t) / 1000), digest]; };
      new Sha256().update(bytes.subarray(0, 2 ** 20)).digestHex();  // warm up (JIT)
      const [portable, a] = await rate(async () => new Sha256().update(bytes).digestHex());
      const [subtle, b] = await rate(() => sha256Hex(bytes));
      if (a !== b) throw new Error("the portable and crypto.subtle digests differ");
      return {portable, subtle};
    }`;
  const url = URL.createObjectURL(new Blob([source], {type: "text/javascript"}));
  const page = await (await import(url)).measure(mib);
  const worker = new Worker(URL.createObjectURL(new Blob(
    [`import {measure} from "${url}"; self.onmessage = async ({data}) => self.postMessage(await measure(data));`],
    {type: "text/javascript"})), {type: "module"});
  const inWorker = await new Promise((resolve, reject) => {
    worker.onmessage = ({data}) => resolve(data);
    worker.onerror = (event) => reject(new Error(event.message));
    worker.postMessage(mib);
  });
  worker.terminate();
  return {page, worker: inWorker};
}
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256, help="MiB of random bytes to hash (default 256)")
    parser.add_argument("--file-gb", type=float, default=2.52, help="file size (GB) to cost (default: fp32 Qwen2.5-Coder-0.5B weights)")
    args = parser.parse_args()
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as empty, harness_page(Path(empty) / "none") as (page, _):
        rates = page.evaluate(MEASURE, args.mib)
    print(f"SHA-256 of {args.mib} MiB in headless Chromium (uptime before: {uptime})")
    for where, figures in rates.items():
        for path, mb_s in figures.items():
            print(f"  {where:6s} {path:8s} {mb_s:7.0f} MB/s   {args.file_gb:.2f} GB file: {args.file_gb * 1000 / mb_s:5.1f} s")
    print(json.dumps({"mib": args.mib, "rates_mb_s": rates, "uptime": uptime}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
