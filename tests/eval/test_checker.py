"""The AST checker scores BFCL's own possible answers 1 and broken calls 0, and agrees with
BFCL's published ast_checker on every one of them (all AST cases of the single-turn categories)."""

import itertools

import pytest

from botpsy_eval.checker import Call, score_case, standardize
from botpsy_eval.data import ANY_CALL_CATEGORIES, CATEGORIES, NO_CALL_CATEGORIES, Case, load_cases
from botpsy_eval.schema import tool_name

AST_CATEGORIES = [c for c in CATEGORIES if c not in NO_CALL_CATEGORIES + ANY_CALL_CATEGORIES]
UNLIKELY = "zz-not-an-answer"


def wrong_value(value, accepted):
    """A value of the same type that no accepted value equals (None when none is easy to make)."""
    if type(value) is str:
        return UNLIKELY
    if type(value) is bool:
        return None if (not value) in accepted else (not value)
    if type(value) in (int, float):
        return type(value)(max(abs(v) for v in accepted if type(v) in (int, float)) * 7 + 1_000_003)
    if type(value) is list:
        return None if not value else value + value
    return None


def perturbed_answers(case: Case, ground_truth):
    """(what was broken, calls) that must score 0."""
    calls = ground_truth.base_calls(case)
    name, arguments = calls[0]
    yield "wrong function name", [(name + "_x", arguments)] + calls[1:]
    required = ground_truth.function_doc(case, name)["parameters"].get("required", [])
    if required:
        missing = {k: v for k, v in arguments.items() if k != required[0]}
        yield "missing required", [(name, missing)] + calls[1:]
    yield "unexpected parameter", [(name, {**arguments, "zz_unexpected": 1})] + calls[1:]
    accepted = next(iter(case.possible_answer[0].values()))
    for parameter, value in arguments.items():
        replacement = wrong_value(value, accepted[parameter])
        if replacement is not None and standardize(str(replacement)) not in map(standardize, map(str, accepted[parameter])):
            yield f"wrong value for {parameter}", [(name, {**arguments, parameter: replacement})] + calls[1:]
            break
    yield "one call too many", calls + [calls[0]]
    if len(calls) > 1:
        yield "one call missing", calls[:-1]


def as_ours(calls):
    return [Call(tool_name(name), arguments) for name, arguments in calls]


def as_bfcls(calls):
    return [{tool_name(name): arguments} for name, arguments in calls]


@pytest.fixture(scope="module")
def ast_cases():
    return load_cases(AST_CATEGORIES)


def test_every_possible_answer_scores_1_and_bfcl_agrees(ast_cases, bfcl_check, ground_truth):
    checked = contradicting = first_fit_misses = 0
    for case in ast_cases:
        expect_correct = not ground_truth.answer_contradicts_doc(case)
        contradicting += not expect_correct
        for calls in ground_truth.every_accepted_answer(case):
            ours = score_case(case, as_ours(calls))
            theirs = bfcl_check(case.category, case.functions, as_bfcls(calls), case.possible_answer)
            if ours.correct and not theirs:
                # BFCL matches parallel calls first-fit, so an order can fail where another passes
                assert any(bfcl_check(case.category, case.functions, as_bfcls(order), case.possible_answer)
                           for order in itertools.permutations(calls)), (case.id, calls)
                first_fit_misses += 1
            else:
                assert ours.correct == theirs, (case.id, calls, ours)
            if expect_correct:
                assert ours.correct, (case.id, calls, ours.reason)
            checked += 1
    assert checked > 10_000
    assert contradicting < 10  # BFCL's own answers that its checker (and ours) scores 0
    assert first_fit_misses < 10


def test_perturbed_answers_score_0_and_bfcl_agrees(ast_cases, bfcl_check, ground_truth):
    kinds = set()
    for case in ast_cases:
        for kind, calls in perturbed_answers(case, ground_truth):
            ours = score_case(case, as_ours(calls))
            assert not ours.correct, (case.id, kind, calls)
            assert ours.reason
            assert not bfcl_check(case.category, case.functions, as_bfcls(calls), case.possible_answer), (case.id, kind)
            kinds.add(kind.split(" for ")[0])
    assert kinds == {"wrong function name", "missing required", "unexpected parameter", "wrong value",
                     "one call too many", "one call missing"}


def test_type_rules_int_for_float_but_not_bool_for_int():
    case = Case("t", "simple_python", [], [{"name": "f", "parameters": {"type": "dict", "properties": {
        "x": {"type": "float"}, "n": {"type": "integer"}}, "required": ["x", "n"]}}],
        [{"f": {"x": [2.0], "n": [1]}}])
    assert score_case(case, [Call("f", {"x": 2, "n": 1})]).correct
    assert not score_case(case, [Call("f", {"x": 2.0, "n": True})]).correct
    assert not score_case(case, [Call("f", {"x": 2.0, "n": 1.0})]).correct


def test_strings_compare_without_case_spaces_or_punctuation():
    case = Case("t", "simple_python", [], [{"name": "city.find", "parameters": {"type": "dict", "properties": {
        "name": {"type": "string"}}, "required": ["name"]}}], [{"city.find": {"name": ["San Francisco, CA"]}}])
    assert score_case(case, [Call("city_find", {"name": "san francisco CA"})]).correct
    assert not score_case(case, [Call("city_find", {"name": "San Jose, CA"})]).correct


def test_irrelevance_wants_no_call_and_relevance_any_call():
    no_call = Case("t", "irrelevance", [], [], None)
    any_call = Case("t", "live_relevance", [], [], None)
    assert score_case(no_call, []).correct and not score_case(no_call, [Call("f", {})]).correct
    assert score_case(any_call, [Call("f", {})]).correct and not score_case(any_call, []).correct
