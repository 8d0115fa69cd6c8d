"""The model files windows of real graphs are cut from (hunt/windows.py): the files of the paths a hunt is given, the order a window seed tries them in, and how a window names it. Torch-free, for the command line."""
from __future__ import annotations

import random
from pathlib import Path

from eqsat_test import REPO_ROOT


def display_path(path: str | Path) -> str:
    """How windows name a model file: relative to the repository where it lies in it, else absolute."""
    p = Path(path).resolve()
    try:
        return str(p.relative_to(REPO_ROOT))
    except ValueError:
        return str(p)


def resolve_source(path: str | Path) -> Path:
    """A source named as windows name it (repo-relative) or as given: the file."""
    p = Path(path)
    if not p.is_file() and not p.is_absolute() and (REPO_ROOT / p).is_file():
        return REPO_ROOT / p
    return p


def model_files(paths) -> list[str]:
    """The model files of files and folders (a folder's *.py, sorted, __init__.py left out), each once."""
    found: list[str] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found += [str(f.resolve()) for f in sorted(p.glob("*.py")) if f.name != "__init__.py"]
        elif p.is_file():
            found.append(str(p.resolve()))
        else:
            raise FileNotFoundError(f"{raw}: no such file or folder")
    return sorted(dict.fromkeys(found))


def source_order(seed: int, files: list[str]) -> list[str]:
    """The model files window `seed` of a hunt tries, in turn, until one yields a window (a file of one op has none)."""
    order = list(files)
    random.Random(f"eqsat-windows-source-{seed}").shuffle(order)
    return order
