"""Architecture registry keyed by Hugging Face `model_type`.

Each module in this package defines one `Architecture` subclass decorated with
`@register`; modules are discovered automatically, so adding an architecture is
adding a file.
"""

import importlib
import pkgutil

from ..errors import UnknownArchitectureError
from .base import Architecture, StateSpec

_BY_MODEL_TYPE: dict[str, type[Architecture]] = {}
_HELPER_MODULES = {"base", "blocks"}


def register(cls: type[Architecture]) -> type[Architecture]:
    for model_type in cls.model_types:
        if model_type in _BY_MODEL_TYPE:
            raise ValueError(f"model_type {model_type!r} registered twice")
        _BY_MODEL_TYPE[model_type] = cls
    return cls


def _discover():
    for info in pkgutil.iter_modules(__path__):
        if info.name not in _HELPER_MODULES:
            importlib.import_module(f"{__name__}.{info.name}")


def supported_model_types() -> list[str]:
    return sorted(_BY_MODEL_TYPE)


def architecture_for(model_type: str) -> type[Architecture]:
    try:
        return _BY_MODEL_TYPE[model_type]
    except KeyError:
        raise UnknownArchitectureError(
            f"unknown architecture {model_type!r}; supported: {', '.join(supported_model_types())}"
        ) from None


_discover()

__all__ = ["Architecture", "StateSpec", "architecture_for", "register", "supported_model_types"]
