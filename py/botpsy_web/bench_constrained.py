"""The "constrained decoding" scenario of `botpsy-web bench` (our runtime only).

The agent's prompt with its 14 default tools (rendered by py/botpsy_agent as the page renders
it), decoded greedily for CONSTRAINED_TOKENS tokens with the tool-call grammar (mode
"required": a call, then the answer as free text) and without it, same prompt, same model
worker, runs alternating. The two outputs differ (that is the point), and guessed tokens
(draft-feeder.js) hold more or less often depending on the text, so the ratio
`constrained_decode_vs_free` compares one token per call (draftTokens 0): what the grammar
costs per token; the same with guessing on is reported beside it, and constrained with a mask
at every step (the processor's `everyMask`: greedy otherwise masks only where the best token is
refused, tool-call-grammar.js). The page samples (PAGE_TEMPERATURE): the same prompt sampled,
seeded, with the agent's greedyCalls (a call's tokens picked greedily, so their masks are skipped
as greedy skips them) against every step masked, and free. Also: the mask time per
token, the compile time of the 14 tools' grammar (a variant not compiled yet each run), the
vocabulary table's setup (once per load), the warm-up prefill with and without the grammar,
and the compile time left for the first token after that warm-up (0: done in warm-up). The
browser side is bench/scenario-constrained.js.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from botpsy_web.bench_scenario import call_scenario, folder_agent

SCENARIO_MODULE = "/bench/scenario-constrained.js"
MESSAGE = "Add a note that the dentist moved to Friday at 10, tagged health."
CONSTRAINED_TOKENS = 64
PAGE_TEMPERATURE = 0.7  # the page's default (web/ui/settings-panel.js)
SAMPLING_SEED = 7

FIGURE_ROWS = (
    ("constrained decode, 1/call (tok/s)", "constrained_decode_tok_s", "{:.2f}"),
    ("  same prompt unconstrained (tok/s)", "constrained_free_decode_tok_s", "{:.2f}"),
    ("  constrained, every step masked (tok/s)", "constrained_decode_tok_s_every_mask", "{:.2f}"),
    ("  masks skipped (greedy)", "grammar_masks_skipped_share", "{:.0%}"),
    ("  sampled at 0.7, calls greedy (tok/s)", "constrained_decode_tok_s_sampled", "{:.2f}"),
    ("  sampled at 0.7, every step masked (tok/s)", "constrained_decode_tok_s_sampled_every_mask", "{:.2f}"),
    ("  sampled at 0.7, unconstrained (tok/s)", "constrained_free_decode_tok_s_sampled", "{:.2f}"),
    ("  constrained, guessing on (tok/s)", "constrained_decode_tok_s_drafted", "{:.2f}"),
    ("  unconstrained, guessing on (tok/s)", "constrained_free_decode_tok_s_drafted", "{:.2f}"),
    ("  grammar mask per token (ms)", "grammar_mask_ms_per_token", "{:.3f}"),
    ("  grammar compile, 14 tools (ms)", "grammar_compile_ms", "{:.0f}"),
    ("  vocabulary table, once (ms)", "grammar_engine_setup_ms", "{:.0f}"),
    ("  warm-up prefill with it (ms)", "grammar_warm_up_ms", "{:.0f}"),
    ("  warm-up prefill without (ms)", "grammar_warm_up_ms_without_grammar", "{:.0f}"),
    ("  compile left at first token (ms)", "grammar_compile_ms_at_first_token", "{:.0f}"),
)


def agent_prompt(folder: Path, variant: int | None = None):
    """(prefix text, prompt text, grammar spec) of the agent with its default tools. A `variant`
    number gives calculator one more optional parameter of that name, so the grammar is one the
    worker has not compiled yet (its cache is keyed by the grammar's text)."""
    from botpsy_agent.agent import AgentOptions
    from botpsy_agent.browser_session import builtin_tools
    from botpsy_agent.tool_selection import DEFAULT_ENABLED_TOOLS
    from botpsy_agent.tooling import Tool

    agent = folder_agent(folder, AgentOptions(tool_calls="required"))
    for tool in builtin_tools():
        if tool.name in DEFAULT_ENABLED_TOOLS:
            parameters = tool.parameters
            if variant is not None and tool.name == "calculator":
                parameters = {**parameters, "properties": {
                    **parameters["properties"], f"variant_{variant}": {"type": "string"}}}
            agent.add_tool(Tool(tool.name, tool.description, parameters, tool.handler, hints=tool.hints))
    prompt = agent.render_prompt(({"role": "user", "content": MESSAGE},))
    [spec] = agent.logits_processors(prompt)
    return agent.render_prompt_prefix(), prompt, spec


def _call(page, function: str, options: dict | None = None):
    return call_scenario(page, SCENARIO_MODULE, function, options)


def measure_constrained(page, load_options: dict, folder: Path, repeats: int, log) -> dict:
    """Figures of the scenario, on a bench page (`page`, a Playwright page of bench/browser-bench.html)."""
    prefix, prompt, spec = agent_prompt(folder)
    load = {key: load_options[key] for key in ("folderUrl", "backend", "dtype")}
    started = _call(page, "start", {**load, "prefix": prefix, "spec": spec})
    try:
        compiles = [_call(page, "compileOnly", {"prompt": prefix, "spec": agent_prompt(folder, run)[2]})
                    for run in range(repeats)]
        every_mask = {**spec, "args": {**spec["args"], "everyMask": True}}
        kinds = (("free", None, 0, 0), ("constrained", spec, 0, 0), ("every_mask", every_mask, 0, 0),
                 ("free_drafted", None, None, 0), ("constrained_drafted", spec, None, 0),
                 ("sampled", spec, 0, PAGE_TEMPERATURE), ("sampled_every_mask", every_mask, 0, PAGE_TEMPERATURE),
                 ("free_sampled", None, 0, PAGE_TEMPERATURE))
        runs = {key: [] for key, *_ in kinds}
        for run in range(repeats):
            for key, grammar, draft, temperature in kinds:
                runs[key].append(_call(page, "decode", {
                    "prompt": prompt, "spec": grammar, "maxTokens": CONSTRAINED_TOKENS, "draftTokens": draft,
                    "temperature": temperature, "seed": SAMPLING_SEED + run}))
            log(f"    run {run + 1}: {runs['constrained'][-1]['tokensPerSecond']:.2f} tok/s constrained, "
                f"{runs['every_mask'][-1]['tokensPerSecond']:.2f} every step masked, "
                f"{runs['free'][-1]['tokensPerSecond']:.2f} free (one token per call); compile {compiles[run]:.0f} ms")
    finally:
        _call(page, "stop")
    log(f"    sampled at {PAGE_TEMPERATURE}: {rate_of(runs, 'sampled'):.2f} tok/s with calls greedy, "
        f"{rate_of(runs, 'sampled_every_mask'):.2f} every step masked, {rate_of(runs, 'free_sampled'):.2f} free")
    constrained = runs["constrained"]
    masks = sum(run["masks"] for run in constrained)
    skipped = sum(run["masksSkipped"] for run in constrained)
    rate = lambda key: rate_of(runs, key)  # noqa: E731
    return {
        "constrained_decode_tok_s": rate("constrained"),
        "constrained_decode_tok_s_runs": [run["tokensPerSecond"] for run in constrained],
        "constrained_free_decode_tok_s": rate("free"),
        "constrained_free_decode_tok_s_runs": [run["tokensPerSecond"] for run in runs["free"]],
        "constrained_decode_tok_s_every_mask": rate("every_mask"),
        "constrained_decode_tok_s_every_mask_runs": [run["tokensPerSecond"] for run in runs["every_mask"]],
        "constrained_same_tokens_every_mask": all(
            a["tokenIds"] == b["tokenIds"] for a, b in zip(constrained, runs["every_mask"])),
        "grammar_masks_skipped_share": skipped / (skipped + masks) if skipped + masks else None,
        "constrained_decode_tok_s_sampled": rate("sampled"),
        "constrained_decode_tok_s_sampled_every_mask": rate("sampled_every_mask"),
        "constrained_free_decode_tok_s_sampled": rate("free_sampled"),
        "constrained_same_tokens_sampled_every_mask": all(
            a["tokenIds"] == b["tokenIds"] for a, b in zip(runs["sampled"], runs["sampled_every_mask"])),
        "grammar_masks_skipped_share_sampled": _skipped_share(runs["sampled"]),
        "grammar_mask_ms_per_token_every_mask": (sum(run["maskMs"] for run in runs["every_mask"]) /
                                                 max(1, sum(run["masks"] for run in runs["every_mask"]))),
        "constrained_decode_tok_s_drafted": rate("constrained_drafted"),
        "constrained_free_decode_tok_s_drafted": rate("free_drafted"),
        "grammar_mask_ms_per_token": (sum(run["maskMs"] for run in constrained) / (masks + skipped)
                                      if masks + skipped else None),
        "grammar_compile_ms": statistics.median(compiles),
        "grammar_compile_ms_runs": compiles,
        "grammar_engine_setup_ms": started["engineSetupMs"],
        "grammar_warm_up_ms": started["warmUpMs"],
        "grammar_warm_up_ms_without_grammar": started["warmUpMsWithoutGrammar"],
        "grammar_compile_ms_at_first_token": started["compileMsOnFirstToken"],
        "constrained_text": constrained[-1]["text"],
        "constrained_free_text": runs["free"][-1]["text"],
    }


def rate_of(runs: dict, key: str) -> float:
    """The median tokens/s of one kind of run."""
    return statistics.median(run["tokensPerSecond"] for run in runs[key])


def _skipped_share(runs: list[dict]) -> float | None:
    masks = sum(run["masks"] for run in runs)
    skipped = sum(run["masksSkipped"] for run in runs)
    return skipped / (skipped + masks) if skipped + masks else None
