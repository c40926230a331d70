"""Score a case's parsed calls against BFCL's possible answers, by BFCL's AST rules.

Written from the rules of BFCL's `ast_checker` (bfcl_eval/eval_checker/ast_eval), for
Python-typed functions:

- How many calls: `simple` and `multiple` categories want exactly one; `parallel` ones
  want one call per expected call, in any order (each expected call is matched to a
  different call: we search the matching exhaustively, BFCL takes the first that fits,
  which agrees whenever no call fits two expected ones).
- A call: the function's name (as the tool was named, see schema.tool_name); every
  parameter the doc requires is there; every parameter it sets is in the doc and among
  the expected ones; every expected parameter whose accepted values do not include `""`
  is there.
- A value: first its type, by the doc's BFCL type (`float` accepts an int; `bool` is not
  an `int`; `tuple` is a list; `any` wants a string). A value whose type is not the doc's
  but is that of the accepted values counts as a "variable" and is compared as is. Then:
  strings compare after `standardize` (no spaces or `,./-_*^`, lower case, `'` as `"`),
  as do the strings inside lists; a dict matches one of the accepted dicts key by key;
  a list of dicts matches an accepted list dict by dict, in order; anything else must be
  among the accepted values. Lists are checked one level deep for their items' type.
- `irrelevance` categories: right when no call was read (a call that failed to parse is
  no call, as in BFCL); `live_relevance`: right when at least one call was read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .data import ANY_CALL_CATEGORIES, NO_CALL_CATEGORIES, Case
from .schema import tool_name

PYTHON_TYPES = {"string": str, "integer": int, "float": float, "boolean": bool, "array": list,
                "tuple": list, "dict": dict, "any": str}
_IGNORED_IN_STRINGS = re.compile(r"[ ,./\-_*^]")


@dataclass(frozen=True)
class Verdict:
    correct: bool
    reason: str = ""  # why not, for the per-case outputs


@dataclass(frozen=True)
class Call:
    """One call as the parser read it: the tool's name and its arguments (JSON values)."""
    name: str
    arguments: dict


def standardize(text: str) -> str:
    return _IGNORED_IN_STRINGS.sub("", text).lower().replace("'", '"')


def score_case(case: Case, calls: list[Call]) -> Verdict:
    if case.category in NO_CALL_CATEGORIES:
        return Verdict(not calls, f"{len(calls)} call(s) where none was wanted" if calls else "")
    if case.category in ANY_CALL_CATEGORIES:
        return Verdict(bool(calls), "" if calls else "no call where one was wanted")
    expected = case.possible_answer or []
    if "parallel" in case.category:
        return _score_unordered(case.functions, calls, expected)
    if len(calls) != 1 or len(expected) != 1:
        return Verdict(False, f"{len(calls)} call(s), expected 1")
    return check_call(case.functions, calls[0], expected[0])


def _score_unordered(functions, calls, expected) -> Verdict:
    if len(calls) != len(expected):
        return Verdict(False, f"{len(calls)} call(s), expected {len(expected)}")
    fits = [[check_call(functions, call, answer).correct for call in calls] for answer in expected]

    def assign(answer_index: int, used: frozenset) -> bool:
        if answer_index == len(expected):
            return True
        return any(fits[answer_index][i] and assign(answer_index + 1, used | {i})
                   for i in range(len(calls)) if i not in used)

    if assign(0, frozenset()):
        return Verdict(True)
    for answer_index, row in enumerate(fits):
        if not any(row):
            name = tool_name(next(iter(expected[answer_index])))
            same_name = [call for call in calls if call.name == name]
            why = (check_call(functions, same_name[0], expected[answer_index]).reason if same_name
                   else "no call has that name")
            return Verdict(False, f"no call matches expected call {answer_index} ({name}): {why}")
    return Verdict(False, "the calls cannot be matched one to one with the expected calls")


def _find_function(functions: list[dict], name: str) -> dict | None:
    return next((function for function in functions if function["name"] == name), None)


def check_call(functions: list[dict], call: Call, answer: dict) -> Verdict:
    """One call against one expected call `{function name: {parameter: [accepted values]}}`."""
    expected_name, accepted = next(iter(answer.items()))
    function = _find_function(functions, expected_name)
    if function is None:
        raise ValueError(f"the possible answer names {expected_name!r}, which the case does not define")
    if call.name != tool_name(expected_name):
        return Verdict(False, f"called {call.name!r}, expected {tool_name(expected_name)!r}")
    properties = function["parameters"].get("properties", {})
    for required in function["parameters"].get("required", []):
        if required not in call.arguments:
            return Verdict(False, f"missing required parameter {required!r}")
    for parameter, value in call.arguments.items():
        if parameter not in properties or parameter not in accepted:
            return Verdict(False, f"unexpected parameter {parameter!r}")
        verdict = check_value(parameter, value, properties[parameter], accepted[parameter])
        if not verdict.correct:
            return verdict
    for parameter, values in accepted.items():
        if parameter not in call.arguments and "" not in values:
            return Verdict(False, f"parameter {parameter!r} left out, but it has no default to fall back on")
    return Verdict(True)


def _answer_type(values: list):
    """The type of the first accepted value that is not the "may be omitted" marker."""
    return next((type(value) for value in values if value != ""), None)


def _type_ok(value, wanted: type, accepted: list) -> tuple[bool, bool]:
    """(the type is acceptable, the value counts as a variable)."""
    answer_type = _answer_type(accepted)
    if type(value) is wanted:
        return True, answer_type is not None and answer_type is not wanted
    return answer_type is not None and type(value) is answer_type, True


def check_value(parameter: str, value, schema: dict, accepted: list) -> Verdict:
    bfcl_type = schema.get("type")
    if bfcl_type not in PYTHON_TYPES:
        raise ValueError(f"parameter {parameter!r}: BFCL type {bfcl_type!r} is not a Python type")
    wanted = PYTHON_TYPES[bfcl_type]
    if bfcl_type == "float" and type(value) is int:
        value = float(value)
    type_ok, variable = _type_ok(value, wanted, accepted)
    if not type_ok:
        return Verdict(False, f"parameter {parameter!r}: expected {bfcl_type}, got {type(value).__name__} {value!r}")
    item_type = None
    if bfcl_type in ("array", "tuple") and type(value) is list:
        item_type = PYTHON_TYPES.get((schema.get("items") or {}).get("type"))
        if item_type is not None and not _items_type_ok(value, item_type, accepted):
            return Verdict(False, f"parameter {parameter!r}: the items of {value!r} are not all {item_type.__name__}")
    if variable:
        ok = value in accepted
    elif wanted is dict:
        ok = any(_dict_matches(value, answer) for answer in accepted if answer != "")
    elif wanted is list and item_type is dict:
        ok = any(type(answer) is list and len(answer) == len(value)
                 and all(_dict_matches(item, expected) for item, expected in zip(value, answer))
                 for answer in accepted)
    elif wanted is str:
        ok = standardize(value) in [standardize(answer) for answer in accepted if type(answer) is str]
    elif wanted is list:
        ok = _standardize_list(value) in [_standardize_list(answer) for answer in accepted if type(answer) is list]
    else:
        ok = value in accepted
    return Verdict(True) if ok else Verdict(False, f"parameter {parameter!r}: {value!r} is not among {accepted!r}")


def _items_type_ok(value: list, item_type: type, accepted: list) -> bool:
    """BFCL checks one level of nesting, going through the accepted values in order: the
    items fit the item type (or, as variables, the type of that accepted list's items);
    an accepted value that is not a list (the `""` marker) lets any items through."""
    return any(type(answer) is not list or all(_type_ok(item, item_type, answer)[0] for item in value)
               for answer in accepted)


def _standardize_list(values: list) -> list:
    return [standardize(item) if type(item) is str else item for item in values]


def _dict_matches(value, answer) -> bool:
    if type(value) is not dict or type(answer) is not dict:
        return False
    for key, item in value.items():
        if key not in answer:
            return False
        choices = [standardize(choice) if type(choice) is str else choice for choice in answer[key]]
        if (standardize(item) if type(item) is str else item) not in choices:
            return False
    return all(key in value or "" in choices for key, choices in answer.items())
