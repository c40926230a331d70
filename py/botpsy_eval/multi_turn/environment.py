"""A case's tool environment: BFCL's own classes, built from the case's initial_config.

Runs under CPython (the PyTorch reference, the tests) and in Pyodide (the agent worker,
where the classes come from the eval's bundle: bundle.py). Built as BFCL builds it
(multi_turn_utils.execute_multi_turn_func_call): each involved class from
CLASS_FILE_PATH_MAPPING, instantiated without arguments, then, unless stateless,
`_load_scenario(deepcopy(initial_config[class]), long_context=...)`. A function name
belongs to the instance whose public method it is (a later class wins, as in BFCL).

A call runs the method with the model's arguments and returns what BFCL's executor returns:
a string as it is, a dict as JSON (str() when it is not serializable), anything else
str(); an exception becomes "Error during execution: <message>". So the model reads what
BFCL's inference shows a model.

The state is every instance's public attributes (what BFCL's state checker compares),
as plain JSON-like values (state_of); diff_states lists what a call changed.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import json
from typing import Any, Callable

from botpsy_agent.tooling import Tool

from ..schema import tool_spec

# A state value longer than this (as JSON) is shortened in a diff, so a transcript stays readable.
DIFF_VALUE_CHARS = 600


class EnvironmentMismatch(ValueError):
    """A case names a class or function the installed environment code does not have."""


def _backend():
    from bfcl_eval.constants import executable_backend_config

    return executable_backend_config


class Environment:
    def __init__(self, involved_classes: list[str], initial_config: dict, long_context: bool):
        backend = _backend()
        self.instances: dict[str, Any] = {}
        self.methods: dict[str, Callable] = {}
        for class_name in involved_classes:
            module_name = backend.CLASS_FILE_PATH_MAPPING.get(class_name)
            if module_name is None:
                raise EnvironmentMismatch(f"no environment class {class_name!r} in bfcl-eval; "
                                        f"known: {', '.join(backend.CLASS_FILE_PATH_MAPPING)}")
            instance = getattr(importlib.import_module(module_name), class_name)()
            if class_name not in backend.STATELESS_CLASSES:
                instance._load_scenario(copy.deepcopy(initial_config.get(class_name, {})), long_context=long_context)
            self.instances[class_name] = instance
            for name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not name.startswith("_"):
                    self.methods[name] = method

    @classmethod
    def for_case(cls, case: dict) -> "Environment":
        """case: data.MultiTurnCase.for_the_agent()."""
        return cls(case["involved_classes"], case["initial_config"], case["long_context"])

    def execute(self, name: str, arguments: dict) -> str:
        """Run one call; the result as BFCL's executor writes it."""
        try:
            method = self.methods.get(name)
            if method is None:
                raise AttributeError(f"no function {name!r} in {', '.join(self.instances)}")
            result = method(**arguments)
        except Exception as error:
            return f"Error during execution: {error}"
        if type(result) is str:
            return result
        if type(result) is dict:
            try:
                return json.dumps(result)
            except (TypeError, ValueError):
                return str(result)
        return str(result)

    def named_call(self, source: str) -> tuple[str, dict]:
        """A ground-truth call as BFCL writes it (`sort('a.txt')`, `cd(folder='x')`) as the name and
        keyword arguments a model would send: positional arguments get their parameter's name."""
        node = ast.parse(source.strip(), mode="eval").body
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.func.id not in self.methods:
            raise EnvironmentMismatch(f"not a call of this environment's functions: {source!r}")
        parameters = list(inspect.signature(self.methods[node.func.id]).parameters)
        arguments = {parameters[index]: ast.literal_eval(value) for index, value in enumerate(node.args)}
        arguments.update({keyword.arg: ast.literal_eval(keyword.value) for keyword in node.keywords})
        return node.func.id, arguments

    def tool(self, doc: dict, on_call: Callable[[str, dict, str], None]) -> Tool:
        """One BFCL function doc as the agent's tool over this environment. on_call(name,
        arguments, result) hears every call that ran."""
        spec = tool_spec(doc)["function"]
        if doc["name"] not in self.methods:
            raise EnvironmentMismatch(f"the function doc {doc['name']!r} has no method in {', '.join(self.instances)}")

        def handler(arguments: dict) -> str:
            result = self.execute(doc["name"], arguments)
            on_call(doc["name"], arguments, result)
            return result

        return Tool.from_json_schema(spec["name"], spec["description"], spec["parameters"], handler)

    def state(self) -> dict:
        """{class name: {public attribute: plain value}}; stateless classes have none."""
        return {name: {key: plain(value) for key, value in vars(instance).items() if not key.startswith("_")}
                for name, instance in self.instances.items()}


def plain(value: Any, _above: tuple = ()) -> Any:
    """A JSON-like copy of a state value. Objects become their public attributes; an attribute
    that points back at an object holding it (a directory's parent) is left out."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if id(value) in _above:
        return None
    above = _above + (id(value),)
    if isinstance(value, dict):
        return {str(key): plain(item, above) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [plain(item, above) for item in items]
    if hasattr(value, "__dict__"):
        return {key: plain(item, above) for key, item in vars(value).items()
                if not key.startswith("_") and id(item) not in above}
    return str(value)


def _shown(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return value if len(text) <= DIFF_VALUE_CHARS else text[:DIFF_VALUE_CHARS] + f"... ({len(text)} characters)"


def diff_states(before: dict, after: dict, path: tuple = ()) -> list[dict]:
    """What changed between two states: [{"path": [class, attribute, key...], "before", "after"}];
    a key that appears has no "before", one that goes has no "after"."""
    if isinstance(before, dict) and isinstance(after, dict):
        changes = []
        for key in list(before) + [key for key in after if key not in before]:
            if key not in after:
                changes.append({"path": [*path, key], "before": _shown(before[key])})
            elif key not in before:
                changes.append({"path": [*path, key], "after": _shown(after[key])})
            else:
                changes += diff_states(before[key], after[key], (*path, key))
        return changes
    if before == after:
        return []
    return [{"path": list(path), "before": _shown(before), "after": _shown(after)}]
