"""Fixtures for the eval tests.

ground_truth: BFCL's possible answers as concrete calls (what a model that got it right writes).
bfcl_check: BFCL's own ast_checker, loaded without its model-handler registry.

ast_checker.py imports `bfcl_eval.constants.model_config` only to ask whether a model's API
turns "." in function names into "_": a stand-in module answers yes (as for our tool names,
see botpsy_eval.schema) so the rest of the real checker runs as published.
"""

import copy
import importlib.util
import sys
import types

import pytest

from botpsy_eval.data import Case

MODEL_NAME = "botpsy-eval"


def _first_given(values):
    return next(value for value in values if value != "")


def concrete(accepted_value):
    """An accepted value as a model would write it: accepted dicts hold lists of choices per key."""
    if type(accepted_value) is dict:
        return {key: _first_given(choices) for key, choices in accepted_value.items()
                if _has_given(choices)}
    if type(accepted_value) is list and accepted_value and all(type(item) is dict for item in accepted_value):
        return [concrete(item) for item in accepted_value]
    return accepted_value


def function_doc(case: Case, name: str) -> dict:
    return next(function for function in case.functions if function["name"] == name)


def answer_contradicts_doc(case: Case) -> bool:
    """A few BFCL answers set a parameter the doc lacks or omit one it requires (BFCL scores them 0 too)."""
    for answer in case.possible_answer:
        name, accepted = next(iter(answer.items()))
        parameters = function_doc(case, name)["parameters"]
        if any(p not in parameters.get("properties", {}) for p in accepted if _has_given(accepted[p])):
            return True
        if any(not _has_given(accepted.get(p, [""])) for p in parameters.get("required", [])):
            return True
    return False


def _has_given(values) -> bool:
    return any(value != "" for value in values)


def base_calls(case: Case) -> list[tuple[str, dict]]:
    """Each expected call with every parameter at its first accepted value (left out when none)."""
    calls = []
    for answer in case.possible_answer:
        name, accepted = next(iter(answer.items()))
        calls.append((name, {p: concrete(_first_given(v)) for p, v in accepted.items()
                             if _has_given(v)}))
    return calls


def every_accepted_answer(case: Case):
    """The base calls, then each parameter set in turn to each of its accepted values ("" = left out)."""
    calls = base_calls(case)
    yield calls
    for index, answer in enumerate(case.possible_answer):
        name, accepted = next(iter(answer.items()))
        required = function_doc(case, name)["parameters"].get("required", [])
        for parameter, values in accepted.items():
            for value in values:
                if value == "" and parameter in required:
                    continue
                variant = copy.deepcopy(calls)
                if value == "":
                    variant[index][1].pop(parameter, None)
                else:
                    variant[index][1][parameter] = concrete(value)
                yield variant
    if len(calls) > 1:
        yield list(reversed(calls))  # parallel calls are order-free


@pytest.fixture(scope="session")
def ground_truth():
    return types.SimpleNamespace(base_calls=base_calls, every_accepted_answer=every_accepted_answer,
                                 answer_contradicts_doc=answer_contradicts_doc, function_doc=function_doc)


@pytest.fixture(scope="session")
def bfcl_check():
    """check(category, functions, [{name: arguments}], possible_answer) -> bool."""
    import bfcl_eval
    from bfcl_eval.constants.enums import Language

    stand_in = types.ModuleType("bfcl_eval.constants.model_config")
    stand_in.MODEL_CONFIG_MAPPING = {MODEL_NAME: types.SimpleNamespace(underscore_to_dot=True)}
    saved = sys.modules.get(stand_in.__name__)
    sys.modules[stand_in.__name__] = stand_in
    try:
        path = f"{bfcl_eval.__path__[0]}/eval_checker/ast_eval/ast_checker.py"
        spec = importlib.util.spec_from_file_location("_bfcl_ast_checker_under_test", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)

        def check(category, functions, outputs, possible_answer) -> bool:
            return module.ast_checker(functions, outputs, possible_answer, Language.PYTHON,
                                      category, MODEL_NAME)["valid"]

        yield check
    finally:
        if saved is None:
            sys.modules.pop(stand_in.__name__, None)
        else:
            sys.modules[stand_in.__name__] = saved
