"""`botpsy-web bench`'s report and its wllama peer, without a browser: the ratios against
transformers.js and wllama, the JSON and the printed table, which GGUF wllama runs, and the
server route that hands that GGUF to the page."""

import json
import urllib.request
from pathlib import Path

import pytest

from botpsy_web import bench, bench_report, bench_wllama


def figures(**values):
    return {"backend": "wasm", "threads": 2, **values}


def engines_on_wasm():
    return {
        "botpsy": figures(format="q8", decode_tok_s=40.0, prefill_tok_s_1024=300.0, agent_s_without_reuse=6.0,
                          agent_s_with_reuse=2.0, load_cached_s=3.0, returning_visitor_first_token_s=0.5,
                          memory_bytes=400e6, memory_bytes_workers=350e6),
        "transformers.js": figures(format="q8", decode_tok_s=20.0, prefill_tok_s_1024=280.0, agent_s_without_reuse=12.0),
        "wllama": figures(format="GGUF Q4_K_M", decode_tok_s=25.0, prefill_tok_s_1024=60.0, agent_s_without_reuse=30.0,
                          agent_s_with_reuse=8.0, load_cached_s=1.5, returning_visitor_first_token_s=2.0),
    }


def report_of(engines, errors=None):
    report = {"model": "smollm2-135m", "architecture": "llama", "browser": "Chromium 156", "repeats": 3,
              "machine": {"cpus": 2, "load_average_at_start": [0.4, 0.5, 0.6], "load_average_at_end": [0.7, 0.6, 0.6]},
              "gguf": {"path": "/x/model.gguf", "file_type": "Q4_K_M", "size_bytes": 10},
              "backends": {"wasm": {"dtype": "q8", "engines": engines, "errors": errors or {},
                                    "ratios": bench_report.backend_ratios(engines)}}}
    report["ratios"] = bench_report.headline_ratios(report)
    return report


def test_ratios_against_wllama_are_ours_over_theirs_with_both_reusing_the_prefix():
    ratios = bench_report.backend_ratios(engines_on_wasm())
    assert ratios["decode_vs_wllama"] == pytest.approx(40 / 25)
    assert ratios["agent_vs_wllama"] == pytest.approx(8 / 2)  # wllama's reuse against ours
    assert ratios["prefill_vs_wllama"] == pytest.approx(300 / 60)
    assert ratios["load_cached_vs_wllama"] == pytest.approx(1.5 / 3)
    assert ratios["returning_visitor_vs_wllama"] == pytest.approx(2.0 / 0.5)
    assert ratios["decode_vs_transformersjs"] == pytest.approx(2.0)
    assert ratios["agent_vs_transformersjs"] == pytest.approx(6.0)


def test_json_report_carries_the_wllama_ratios_at_the_top_and_none_when_wllama_did_not_run():
    report = report_of(engines_on_wasm())
    top = json.loads(json.dumps(report))["ratios"]
    assert top["decode_vs_wllama"] == pytest.approx(1.6) and top["agent_vs_wllama"] == pytest.approx(4.0)
    assert top["decode_vs_transformersjs"] == pytest.approx(2.0)

    without = {name: values for name, values in engines_on_wasm().items() if name != "wllama"}
    top = report_of(without)["ratios"]
    assert top["decode_vs_wllama"] is None and top["agent_vs_wllama"] is None
    assert top["decode_vs_transformersjs"] == pytest.approx(2.0)


def test_table_has_a_column_per_engine_with_its_format_memory_in_megabytes_and_why_an_engine_is_missing():
    engines = engines_on_wasm()
    del engines["transformers.js"]
    table = bench_report.format_report(report_of(engines, errors={"transformers.js": "no ONNX session"}))
    header = next(line for line in table.splitlines() if "botpsy" in line and "wllama" in line)
    assert header.split() == ["botpsy", "wllama"]
    assert "GGUF Q4_K_M" in next(line for line in table.splitlines() if line.startswith("format"))
    memory = next(line for line in table.splitlines() if line.startswith("memory, page + workers"))
    assert memory.split()[-2:] == ["400", "-"]
    assert "transformers.js could not run: no ONNX session" in table
    assert "wllama runs /x/model.gguf (Q4_K_M)" in table
    assert "load 0.40 at start, 0.70 at end" in table
    assert "decode_vs_wllama 1.60" in table


def test_wllama_runs_the_gguf_the_folder_was_exported_from(tmp_path):
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    assert bench_wllama.gguf_for_folder({"source": str(gguf)}, None) == gguf.resolve()
    # --gguf wins over the manifest
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF")
    assert bench_wllama.gguf_for_folder({"source": str(gguf)}, other) == other.resolve()


def test_a_builtin_source_names_its_packaged_gguf():
    from botpsy_export.builtins.smollm2 import smollm2_gguf_path

    path = bench_wllama.gguf_for_folder({"source": "smollm2-135m"}, None)
    assert path == Path(smollm2_gguf_path()).resolve()
    assert bench_wllama.gguf_file_type(path) == "Q4_1"


@pytest.mark.parametrize("source", ["/nowhere/model.gguf", "some-org/some-model", ""])
def test_a_folder_without_a_gguf_on_this_machine_asks_for_gguf(source):
    with pytest.raises(ValueError, match="--gguf PATH"):
        bench_wllama.gguf_for_folder({"source": source}, None)


def test_a_bad_gguf_option_is_an_error_that_names_it(tmp_path):
    with pytest.raises(ValueError, match="--gguf .*no such file"):
        bench_wllama.gguf_for_folder({}, tmp_path / "missing.gguf")
    (tmp_path / "weights.bin").write_bytes(b"x")
    with pytest.raises(ValueError, match="not a .gguf file"):
        bench_wllama.gguf_for_folder({}, tmp_path / "weights.bin")


def test_without_a_gguf_the_bench_runs_the_other_engines_and_says_why_wllama_is_missing(tmp_path):
    engines, gguf, error = bench_wllama.engines_and_gguf({"source": "some-org/some-model"}, bench.ENGINES, None, print)
    assert engines == ["botpsy", "transformers.js", "native"] and gguf is None and "--gguf PATH" in error
    with pytest.raises(ValueError, match="no such file"):
        bench_wllama.engines_and_gguf({"source": "smollm2-135m"}, bench.ENGINES, tmp_path / "missing.gguf", print)
    assert bench_wllama.engines_and_gguf({}, ["botpsy"], None, print) == (["botpsy"], None, None)


def test_wllama_context_holds_the_longest_prompt_and_its_reply():
    assert bench_wllama.context_tokens([1024, 1300, 900], 64) == 1536
    assert bench_wllama.context_tokens([100], 8) == 256


def test_generated_token_count_comes_from_ids_or_from_the_engines_count():
    assert bench.generated_tokens({"tokens": [1, 2, 3]}) == 3
    assert bench.generated_tokens({"tokens": None, "tokenCount": 32}) == 32
    assert bench.decode_rate({"tokens": None, "tokenCount": 33, "totalMs": 3000, "ttftMs": 1000}) == pytest.approx(16)


def test_the_bench_server_serves_the_gguf_isolated_and_in_ranges(tmp_path):
    gguf = tmp_path / "weights" / "tiny.gguf"
    gguf.parent.mkdir()
    gguf.write_bytes(bytes(range(200)))
    models = tmp_path / "models"
    models.mkdir()
    server, base_url = bench_wllama.serve_with_gguf(models, gguf)
    try:
        url = base_url + bench_wllama.gguf_url(gguf)
        assert url.endswith("/bench-gguf/tiny.gguf")
        with urllib.request.urlopen(url) as response:
            assert response.read() == bytes(range(200))
            assert response.headers["Cross-Origin-Embedder-Policy"] == "require-corp"
        request = urllib.request.Request(url, headers={"Range": "bytes=10-19"})
        with urllib.request.urlopen(request) as response:
            assert response.status == 206 and response.read() == bytes(range(10, 20))
        with pytest.raises(urllib.error.HTTPError) as missing:  # only that one file is reachable
            urllib.request.urlopen(base_url + "/bench-gguf/other.gguf")
        assert missing.value.code == 404
        with urllib.request.urlopen(base_url + "/bench/browser-bench.html") as response:
            assert b"browser-bench.js" in response.read()
    finally:
        server.shutdown()
        server.server_close()
