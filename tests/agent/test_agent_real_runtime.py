"""The agent host on the real runtime: the real model worker runs an exported
tiny Qwen3.5 (random weights, so its words mean nothing) on WASM; the agent
renders prompts with the folder's own chat template and finishes its turns."""

import pytest

PAGE = "/tests/pages/agent-host.html"
GENERATIONS = "() => window.agentTest.agent.turnStats.generations"  # of the last turn


@pytest.fixture(scope="module")
def real_model_page(browser, open_guarded_page, agent_bundle, server, exported_model):
    exported_model("tiny-qwen3.5")
    context, page, guard = open_guarded_page(browser)
    page.set_default_timeout(300_000)
    yield page
    context.close()
    guard.assert_clean()


def test_turns_complete_on_the_real_runtime_and_reuse_the_prefix(real_model_page, server):
    page = real_model_page
    page.goto(server + PAGE)
    started = page.evaluate("options => window.startAgent(options)", {
        "modelUrl": "/models/tiny-qwen3.5/", "storeName": "botpsy-test-real", "thinking": False,
        "settings": {"maxTokens": 12, "temperature": 0, "maxSteps": 2}})
    assert "notes_create" in started["tools"]
    first = page.evaluate("text => window.runTurn(text)", "Hello there")
    second = page.evaluate("text => window.runTurn(text)", "And again")
    for turn in (first, second):
        assert turn["final"]["type"] == "final" and turn["final"]["steps"] >= 1
        assert not [event for event in turn["events"] if event["type"] == "error"
                    and "steps" not in event["message"]]
        assert turn["stats"]["generatedTokens"] >= 1
    assert second["stats"]["reusedTokens"] > 0
    print(f"\nreal runtime, tiny-qwen3.5: first turn {first['turnMs']:.0f} ms, second {second['turnMs']:.0f} ms; "
          f"second turn reused {second['stats']['reusedTokens']} of {second['stats']['promptTokens']} prompt tokens")


def _start_and_warm_up(page, server, store_name, max_tokens):
    """The agent on tiny-qwen3.5 in a fresh page, warmed up: what warmUp() resolved with."""
    page.goto(server + PAGE)
    page.evaluate("options => window.startAgent(options)", {
        "modelUrl": "/models/tiny-qwen3.5/", "storeName": store_name, "thinking": False,
        "settings": {"maxTokens": max_tokens, "temperature": 0, "maxSteps": 1}})
    return page.evaluate("() => window.agentTest.agent.warmUp()")


def test_warming_up_runs_the_system_prompt_and_tools_before_the_first_turn(real_model_page, server):
    page = real_model_page
    warmed = _start_and_warm_up(page, server, "botpsy-test-warm", max_tokens=6)
    assert warmed["promptTokens"] > 100 and not warmed["cancelled"]  # the tool schemas are long
    turn = page.evaluate("text => window.runTurn(text)", "Hello there")
    assert turn["final"]["type"] == "final"
    # the first turn computed only its messages (the agent's now line, ~15 tokens, and the user's) and what
    # follows them
    assert turn["stats"]["reusedTokens"] >= warmed["promptTokens"] - 2
    assert turn["stats"]["promptTokens"] - turn["stats"]["reusedTokens"] < 45


def test_warming_up_compiles_the_grammars_of_turns_routed_to_one_topic(real_model_page, server):
    page = real_model_page
    warmed = _start_and_warm_up(page, server, "botpsy-test-routed", max_tokens=4)
    assert warmed["routedGrammars"] >= 4, warmed  # todos, notes, calendar, time, ... of the default tools
    # A message naming one topic: its first step's grammar was compiled by the warm-up.
    routed = page.evaluate("text => window.runTurn(text)", "add oat milk to my todos")
    assert routed["final"]["first_step_tools"]["topics"] == ["todos"]
    assert page.evaluate(GENERATIONS) == 1 and routed["stats"]["grammarCompileMs"] == 0, routed["stats"]
    # Two topics at once: a grammar no warm-up compiled, compiled at the turn's first token.
    both = page.evaluate("text => window.runTurn(text)", "put oat milk in a note and on my todos")
    assert both["final"]["first_step_tools"]["topics"] == ["notes", "todos"]
    assert page.evaluate(GENERATIONS) == 1 and both["stats"]["grammarCompileMs"] > 0, both["stats"]
