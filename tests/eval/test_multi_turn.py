"""BFCL v4's multi-turn categories under CPython: every environment class of every category
builds from its case's initial_config and runs a ground-truth turn exactly as BFCL's own
executor does; a model that writes the ground truth through our agent loop passes BFCL's
checker in every category, and one wrong, missing or extra call fails it; held-out functions
arrive at their turn; a turn that never stops calling tools ends the case as BFCL's
force-quit does; the transcript has its documented shape."""

import asyncio
import json
import uuid

import pytest

from botpsy_agent.chat_format import ChatFormat
from botpsy_agent.scripted_model import ScriptedModel
from botpsy_eval.data import MULTI_TURN_CATEGORIES
from botpsy_eval.multi_turn.checker import call_source, score_transcript
from botpsy_eval.multi_turn.conversation import run_conversation
from botpsy_eval.multi_turn.data import load_category, load_cases
from botpsy_eval.multi_turn.environment import Environment, plain
from botpsy_eval.multi_turn.first_prompt import starts_alike, todays_start
from botpsy_eval.multi_turn.replay import replays_alike
from botpsy_eval.multi_turn.runner import bfcl_step_limit, shared_prompt_order

# A template that ignores tools: the agent teaches Hermes JSON calls in the system message.
TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
            "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
CHAT_FORMAT = ChatFormat(TEMPLATE, "hermes_json", False, "", "<|im_end|>")
SETTINGS = {"max_tokens": 256, "max_steps": 21, "tool_calls": "free"}


def hermes(calls) -> str:
    return "\n".join(f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"
                     for name, arguments in calls)


def ground_truth_outputs(case, turns=None) -> list[str]:
    """What a model that gets every turn right writes: each turn's calls in one reply, then a
    reply without calls (a turn whose ground truth is empty: only that reply)."""
    environment = Environment(case.involved_classes, case.initial_config, case.long_context)
    outputs = []
    for calls in turns if turns is not None else case.ground_truth:
        if calls:
            outputs.append(hermes(environment.named_call(source) for source in calls))
        outputs.append("Done.")
    return outputs


def converse(case, outputs, settings=SETTINGS) -> dict:
    return asyncio.run(run_conversation(case.for_the_agent(), ScriptedModel(outputs), CHAT_FORMAT, settings))


def first_case_per_class():
    for category in MULTI_TURN_CATEGORIES:
        seen = set()
        for case in load_category(category):
            for class_name in case.involved_classes:
                if class_name not in seen:
                    seen.add(class_name)
                    yield pytest.param(category, class_name, case, id=f"{category}-{class_name}")


@pytest.mark.parametrize(("category", "class_name", "case"), list(first_case_per_class()))
def test_every_class_builds_from_its_initial_config_and_runs_a_ground_truth_turn_as_bfcl_does(category, class_name, case):
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call

    environment = Environment(case.involved_classes, case.initial_config, case.long_context)
    instance = environment.instances[class_name]
    assert type(instance).__name__ == class_name
    if case.initial_config.get(class_name):  # the scenario was loaded: its state is not the class's default
        assert environment.state()[class_name] != plain({k: v for k, v in vars(type(instance)()).items()
                                                         if not k.startswith("_")})
    turn = next(calls for calls in case.ground_truth if calls)
    ours = [environment.execute(*environment.named_call(source)) for source in turn]
    theirs, instances = execute_multi_turn_func_call(turn, case.initial_config, case.involved_classes,
                                                     f"test_{uuid.uuid4().hex}", case.id,
                                                     long_context=case.long_context, is_evaL_run=True)
    assert ours == theirs
    assert environment.state() == {name: {k: plain(v) for k, v in vars(obj).items() if not k.startswith("_")}
                                   for name, obj in instances.items()}


def sample():
    return [pytest.param(case, id=case.id) for case in load_cases(MULTI_TURN_CATEGORIES, limit=6, seed=1)]


@pytest.mark.parametrize("case", sample())
def test_the_ground_truth_written_through_the_agent_loop_passes_bfcls_checker(case):
    transcript = converse(case, ground_truth_outputs(case))
    verdict = score_transcript(case, transcript)
    assert verdict.correct, verdict
    assert verdict.no_call_turns_ok
    assert len(transcript["turns"]) == len(case.turns) and not transcript["forced_quit"]
    ran = [call for turn in transcript["turns"] for step in turn["steps"] for call in step["calls"]]
    assert all(call["ran"] for call in ran) and len(ran) == sum(map(len, case.ground_truth))


def a_case_with_a_state_changing_call():
    for case in load_category("multi_turn_base"):
        for turn_index, calls in enumerate(case.ground_truth):
            for call_index, source in enumerate(calls):
                if source.startswith(("mkdir(", "touch(", "post_tweet(")):
                    return case, turn_index, call_index
    raise AssertionError("no multi_turn_base case makes a directory, a file or a tweet")


def test_a_wrong_argument_a_missing_call_or_a_silent_turn_fails_bfcls_checker():
    case, turn_index, call_index = a_case_with_a_state_changing_call()
    environment = Environment(case.involved_classes, case.initial_config, case.long_context)

    def with_turn(calls):
        turns = [list(turn) for turn in case.ground_truth]
        turns[turn_index] = calls
        return turns

    name, arguments = environment.named_call(case.ground_truth[turn_index][call_index])
    key = next(key for key, value in arguments.items() if isinstance(value, str))
    perturbed = {**arguments, key: arguments[key] + "_x"}
    changed = with_turn([call_source(name, perturbed) if index == call_index else source
                         for index, source in enumerate(case.ground_truth[turn_index])])
    verdict = score_transcript(case, converse(case, ground_truth_outputs(case, changed)))
    assert not verdict.correct and verdict.error_type.startswith("multi_turn:"), verdict

    missing = with_turn([source for index, source in enumerate(case.ground_truth[turn_index]) if index != call_index])
    assert not score_transcript(case, converse(case, ground_truth_outputs(case, missing))).correct

    silent = with_turn([])
    verdict = score_transcript(case, converse(case, ground_truth_outputs(case, silent)))
    assert not verdict.correct and verdict.error_type == "multi_turn:empty_turn_model_response"


def test_held_out_functions_are_offered_from_their_turn_on():
    case = next(case for case in load_category("multi_turn_miss_func") if case.added_functions)
    (turn, docs), = case.added_functions.items()
    names = [doc["name"] for doc in docs]
    model = ScriptedModel(ground_truth_outputs(case))
    transcript = asyncio.run(run_conversation(case.for_the_agent(), model, CHAT_FORMAT, SETTINGS))
    assert transcript["turns"][turn]["functions_added"] == names
    assert transcript["turns"][turn]["user"] == "I have updated some more functions you can choose from. What about now?"
    assert not set(names) & set(transcript["functions"])
    first_prompt_of_turn = [len(transcript["turns"][index]["steps"]) for index in range(turn)]
    before, after = model.prompts[sum(first_prompt_of_turn) - 1], model.prompts[sum(first_prompt_of_turn)]
    for name in names:
        assert f'"name": "{name}"' not in before and f'"name": "{name}"' in after
    assert score_transcript(case, transcript).correct


def test_a_turn_that_never_stops_calling_ends_the_case_as_bfcls_force_quit():
    case = load_category("multi_turn_base")[0]
    environment = Environment(case.involved_classes, case.initial_config, case.long_context)
    forever = hermes([environment.named_call("ls(a=True)")])
    transcript = converse(case, [forever] * 40)
    assert bfcl_step_limit() == 21
    assert transcript["forced_quit"] and len(transcript["turns"]) == 1
    assert len(transcript["turns"][0]["steps"]) == 21
    verdict = score_transcript(case, transcript)
    assert not verdict.correct and verdict.error_type == "multi_turn:force_terminated"


def test_the_transcript_records_every_call_its_result_and_the_state_it_changed():
    case, turn_index, call_index = a_case_with_a_state_changing_call()
    transcript = converse(case, ground_truth_outputs(case) + ["unused"])
    assert set(transcript) == {"case_id", "category", "tool_calls", "max_steps_per_turn", "functions", "turns",
                               "forced_quit", "error", "first_prompt", "first_constraint", "seconds"}
    turn = transcript["turns"][turn_index]
    assert set(turn) == {"turn", "user", "steps", "reply", "seconds", "forced_quit"}
    step = turn["steps"][0]
    assert set(step) == {"step", "prompt_chars", "output", "calls", "seconds"}
    call = step["calls"][call_index]
    assert set(call) == {"name", "arguments", "ran", "result", "state_diff"}
    assert call["ran"] and call["state_diff"], call
    change = call["state_diff"][0]
    assert change["path"][0] in case.involved_classes and "after" in change
    json.dumps(transcript)  # plain JSON


def test_a_call_against_the_schema_is_refused_and_never_replayed():
    case = load_category("multi_turn_base")[0]
    outputs = [hermes([("mkdir", {"dir_name": 7})]), "Done."] + ["Done."] * len(case.turns)
    transcript = converse(case, outputs)
    refused = transcript["turns"][0]["steps"][0]["calls"][0]
    assert not refused["ran"] and refused["result"].startswith("Error: InvalidArguments") and "state_diff" not in refused
    assert not score_transcript(case, transcript).correct


def test_multi_turn_and_single_turn_categories_are_not_mixed_in_one_run(tmp_path):
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "botpsy_web.cli", "eval", str(tmp_path), "--categories",
                             "multi_turn_base,simple_python"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "mixes multi-turn and single-turn categories (simple_python)" in result.stderr


def test_cases_offering_the_same_functions_run_one_after_another():
    """Their prompts share the system prompt and tool docs, which the next case reuses."""
    order = [tuple(function["name"] for function in case.functions)
             for case in sorted(load_cases(MULTI_TURN_CATEGORIES, limit=10), key=shared_prompt_order)]
    groups = [functions for i, functions in enumerate(order) if i == 0 or functions != order[i - 1]]
    assert len(groups) == len(set(order)) < len(order)


def test_a_stored_transcript_stands_in_only_for_todays_prompt_and_grammar():
    """--resume: a transcript run under another system prompt, template or grammar is run again."""
    case = load_category("multi_turn_base")[0]
    transcript = converse(case, ground_truth_outputs(case))
    free = todays_start(case.for_the_agent(), CHAT_FORMAT, SETTINGS)
    assert free == (transcript["first_prompt"], "") and starts_alike(transcript, free)
    constrained = todays_start(case.for_the_agent(), CHAT_FORMAT, {**SETTINGS, "tool_calls": "constrained"})
    assert constrained[0] == free[0] and constrained[1]  # the same prompt, under a grammar
    assert not starts_alike(transcript, constrained)
    other_template = ChatFormat(TEMPLATE.replace("{{ m.content }}", "{{ m.content | trim }}."), "hermes_json", False,
                                "", "<|im_end|>")
    assert not starts_alike(transcript, todays_start(case.for_the_agent(), other_template, SETTINGS))
    undated = {key: value for key, value in transcript.items() if key != "first_constraint"}  # an older transcript
    assert starts_alike(undated, free) and not starts_alike(undated, constrained)


def test_a_stored_transcript_stands_in_only_if_todays_agent_makes_the_same_of_its_outputs():
    """--resume: the stored outputs replayed through today's agent and environment must give the
    stored calls, results and state changes at every step; a call today's agent would refuse (or
    run differently), a result that changed, or a step more or fewer runs the case again."""
    case, turn_index, call_index = a_case_with_a_state_changing_call()
    transcript = json.loads(json.dumps(converse(case, ground_truth_outputs(case) + ["unused"])))  # as stored
    assert replays_alike(case.for_the_agent(), transcript, CHAT_FORMAT, SETTINGS)

    call = transcript["turns"][turn_index]["steps"][0]["calls"][call_index]
    for change in ({"ran": False}, {"result": "an older tool's result"}, {"state_diff": []}):
        edited = json.loads(json.dumps(transcript))
        edited["turns"][turn_index]["steps"][0]["calls"][call_index].update(change)
        assert not replays_alike(case.for_the_agent(), edited, CHAT_FORMAT, SETTINGS), change
    assert call["ran"]

    shorter = json.loads(json.dumps(transcript))
    shorter["turns"][-1]["steps"].pop()  # today's agent would ask for one generation more
    assert not replays_alike(case.for_the_agent(), shorter, CHAT_FORMAT, SETTINGS)
