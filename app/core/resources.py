"""The one place that finds files under ``resources/`` (programs, styles, icons).

From a source checkout the folder sits beside ``app/``; an installed wheel
carries it as the package ``autograd_lens_resources`` (see pyproject.toml).
This module never imports Qt.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path

__all__ = ["program_files", "resource_path", "resource_root", "style_files"]


@cache
def resource_root() -> Path:
    beside = Path(__file__).resolve().parents[2] / "resources"
    if (beside / "programs").is_dir():
        return beside
    spec = importlib.util.find_spec("autograd_lens_resources")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the resources folder of Autograd Lens is missing")
    return Path(next(iter(spec.submodule_search_locations)))


def resource_path(*parts: str) -> Path:
    return resource_root().joinpath(*parts)


def program_files() -> list[Path]:
    return sorted(resource_path("programs").glob("*.toml"))


def style_files() -> list[Path]:
    return sorted(resource_path("styles").glob("*.qss"))
