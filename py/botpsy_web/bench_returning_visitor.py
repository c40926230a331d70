"""The "returning visitor" scenario of `botpsy-web bench`.

A page load from the cache, then the first answer, with the agent's real warm-up prefix (the
system prompt and the default tools, rendered by py/botpsy_agent as the page renders it) and a
first message sent the moment the model is ready. Measured twice per run, each visit in a fresh
model worker as after a reload: with no stored prompt state (the prefix is computed, then stored)
and with the state the first visit stored (restored instead of computed). Figures:
returning_visitor_first_token_s (with the state) and ..._without_state, the load times of both
(ready must not come later), the state's size, its restore time, and whether both visits gave the
same tokens. When the folder ships a prompt state for this dtype on WASM (`botpsy-web prompt-state`),
a third visit is a first visit with it: nothing stored (neither an earlier state nor the shipped file),
the shipped state downloaded and restored at the warm-up; the other two visits then run with the
folder's index answered 404, as for a folder without one. The browser side is
bench/scenario-returning-visitor.js.

The other engines store no prompt state, so their returning visitor is a reload from the cache
(the engine unloaded, then loaded again on the same page) and the same first prompt, whole:
returning_visitor_first_token_s and returning_visitor_load_s, in the same columns.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from botpsy_web.bench_scenario import call_scenario, folder_agent

SCENARIO_MODULE = "/bench/scenario-returning-visitor.js"
FIRST_MESSAGE = "What is on my calendar tomorrow?"
ANSWER_TOKENS = 8

FIGURE_ROWS = (
    ("returning visitor, first token (s)", "returning_visitor_first_token_s", "{:.2f}"),
    ("  without the stored state (s)", "returning_visitor_first_token_s_without_state", "{:.2f}"),
    ("  load to ready, with state (s)", "returning_visitor_load_s", "{:.2f}"),
    ("  load to ready, without (s)", "returning_visitor_load_s_without_state", "{:.2f}"),
    ("  prefix tokens", "returning_visitor_prefix_tokens", "{:.0f}"),
    ("  state size (MB)", "returning_visitor_state_mb", "{:.1f}"),
    ("  state restore (s)", "returning_visitor_restore_s", "{:.2f}"),
    ("  warm-up prefill, with state (s)", "returning_visitor_warm_up_s", "{:.2f}"),
    ("  warm-up prefill, without (s)", "returning_visitor_warm_up_s_without_state", "{:.2f}"),
    ("  the message's own prefill (s)", "returning_visitor_message_prefill_s", "{:.2f}"),
    ("first visit, shipped state (s)", "first_visit_shipped_state_first_token_s", "{:.2f}"),
    ("  shipped restore + download (s)", "first_visit_shipped_state_restore_s", "{:.2f}"),
    ("  shipped state file (MB)", "first_visit_shipped_state_mb", "{:.1f}"),
)


def agent_prompts(folder: Path, encode) -> tuple[list[int], list[int]]:
    """(warm-up prefix ids, first prompt ids) of the agent with its default tools, for this folder."""
    from botpsy_agent.browser_session import builtin_tools
    from botpsy_agent.tool_selection import DEFAULT_ENABLED_TOOLS

    agent = folder_agent(folder)
    for tool in builtin_tools():
        agent.add_tool(tool, enabled_by_default=tool.name in DEFAULT_ENABLED_TOOLS)
    prompt = agent.render_prompt(({"role": "user", "content": FIRST_MESSAGE},))
    return encode(agent.render_prompt_prefix()), encode(prompt)


def _visit(page, options: dict) -> dict:
    return call_scenario(page, SCENARIO_MODULE, "visit", options)


def shipped_entry(folder: Path, backend: str, dtype: str) -> dict | None:
    """The folder's shipped prompt state for WASM `dtype` (its index entry), or None."""
    from botpsy_web.prompt_state.key import read_index, state_file_name

    if backend != "wasm":
        return None
    return next((e for e in read_index(folder)["states"] if e.get("file") == state_file_name(dtype)), None)


def _index_hidden(page, folder_url: str, hidden: bool) -> None:
    """Answers the folder's prompt-states.json with 404 (hidden) or lets it through."""
    pattern = f"{folder_url.rstrip('/')}/prompt-states.json"
    if hidden:
        page.context.route(pattern, lambda route: route.fulfill(status=404, body=b"hidden by the bench"))
    else:
        page.context.unroute(pattern)


def measure_returning_visitor(engine: str, bench_page, load_options: dict, folder: Path, encode, repeats: int,
                              log) -> dict:
    """Figures of the scenario for `engine`, on its bench page (bench.BenchPage)."""
    prefix_ids, prompt_ids = agent_prompts(folder, encode)
    if engine != "botpsy":
        return measure_reload_first_token(bench_page, load_options, prompt_ids, repeats, log)
    page = bench_page.page
    options = {"folderUrl": load_options["folderUrl"], "backend": load_options["backend"],
               "dtype": load_options["dtype"], "prefixIds": prefix_ids, "promptIds": prompt_ids,
               "maxTokens": ANSWER_TOKENS}
    folder_url = bench_page.page.evaluate("(url) => new URL(url, location.href).href", load_options["folderUrl"])
    shipped = shipped_entry(folder, load_options["backend"], load_options["dtype"])
    without, with_state, first_shipped = [], [], []
    for run in range(repeats):
        call_scenario(page, SCENARIO_MODULE, "forgetPromptStates", load_options["folderUrl"])
        _index_hidden(page, folder_url, bool(shipped))
        try:
            without.append(_visit(page, options))
            with_state.append(_visit(page, options))
        finally:
            if shipped:
                _index_hidden(page, folder_url, False)
        log(f"    run {run + 1}: first token {without[-1]['firstTokenMs'] / 1000:.2f} s without the state, "
            f"{with_state[-1]['firstTokenMs'] / 1000:.2f} s with it")
        if shipped:
            call_scenario(page, SCENARIO_MODULE, "forgetPromptStates", load_options["folderUrl"])
            call_scenario(page, SCENARIO_MODULE, "forgetShippedStates", load_options["folderUrl"])
            first_shipped.append(_visit(page, options))
            log(f"    run {run + 1}: first visit with the shipped state: first token "
                f"{first_shipped[-1]['firstTokenMs'] / 1000:.2f} s, restored "
                f"{first_shipped[-1]['warmUp']['promptState']['restoredTokens']} tokens")
    restores = [visit["warmUp"]["promptState"]["restoreMs"] for visit in with_state]
    median_s = lambda visits, key: statistics.median(visit[key] for visit in visits) / 1000  # noqa: E731
    shipped_figures = {} if not first_shipped else {
        "first_visit_shipped_state_first_token_s": median_s(first_shipped, "firstTokenMs"),
        "first_visit_shipped_state_first_token_s_runs": [visit["firstTokenMs"] / 1000 for visit in first_shipped],
        "first_visit_shipped_state_restore_s": (
            statistics.median(v["warmUp"]["promptState"]["restoreMs"] or 0 for v in first_shipped) / 1000),
        "first_visit_shipped_state_restored_tokens": [v["warmUp"]["promptState"]["restoredTokens"] for v in first_shipped],
        "first_visit_shipped_state_source": [v["warmUp"]["promptState"]["source"] for v in first_shipped],
        "first_visit_shipped_state_mb": shipped["size"] / 1e6,
        "first_visit_shipped_state_same_tokens": all(a["tokens"] == b["tokens"] for a, b in zip(without, first_shipped)),
    }
    return {
        **shipped_figures,
        "returning_visitor_first_token_s": median_s(with_state, "firstTokenMs"),
        "returning_visitor_first_token_s_runs": [visit["firstTokenMs"] / 1000 for visit in with_state],
        "returning_visitor_first_token_s_without_state": median_s(without, "firstTokenMs"),
        "returning_visitor_first_token_s_without_state_runs": [visit["firstTokenMs"] / 1000 for visit in without],
        "returning_visitor_load_s": median_s(with_state, "loadMs"),
        "returning_visitor_load_s_without_state": median_s(without, "loadMs"),
        "returning_visitor_prefix_tokens": len(prefix_ids),
        "returning_visitor_prompt_tokens": len(prompt_ids),
        "returning_visitor_state_mb": statistics.median(visit["stateBytes"] for visit in without) / 1e6,
        "returning_visitor_restore_s": (statistics.median(restores) / 1000) if None not in restores else None,
        "returning_visitor_warm_up_s": statistics.median(v["warmUp"]["prefillMs"] for v in with_state) / 1000,
        "returning_visitor_warm_up_s_without_state": statistics.median(v["warmUp"]["prefillMs"] for v in without) / 1000,
        "returning_visitor_message_prefill_s": median_s(with_state, "answerPrefillMs"),
        "returning_visitor_message_prefill_phase_ms": with_state[-1]["answerPrefillPhaseMs"],
        "returning_visitor_restored_tokens": [visit["warmUp"]["restoredTokens"] for visit in with_state],
        "returning_visitor_same_tokens": all(a["tokens"] == b["tokens"] for a, b in zip(without, with_state)),
    }


def measure_reload_first_token(bench_page, load_options: dict, prompt_ids: list[int], repeats: int, log) -> dict:
    """An engine without stored prompt state: unload, load from the cache, then the first prompt."""
    loads, first_tokens = [], []
    for run in range(repeats):
        bench_page.call("unload")
        loads.append(bench_page.call("load", load_options)["loadMs"] / 1000)
        first_tokens.append(bench_page.generate(prompt_ids, ANSWER_TOKENS)["ttftMs"] / 1000)
        log(f"    run {run + 1}: first token {first_tokens[-1]:.2f} s after a {loads[-1]:.2f} s load")
    return {
        "returning_visitor_first_token_s": statistics.median(first_tokens),
        "returning_visitor_first_token_s_runs": first_tokens,
        "returning_visitor_load_s": statistics.median(loads),
        "returning_visitor_prompt_tokens": len(prompt_ids),
    }
