"""Fixtures for the eval tests.

bfcl_check: BFCL's own ast_checker, loaded without its model-handler registry.

ast_checker.py imports `bfcl_eval.constants.model_config` only to ask whether a model's API
turns "." in function names into "_": a stand-in module answers yes (as for our tool names,
see botpsy_eval.schema) so the rest of the real checker runs as published.
"""

import importlib.util
import sys
import types

import pytest

MODEL_NAME = "botpsy-eval"


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
