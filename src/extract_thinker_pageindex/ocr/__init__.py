"""Reading pages that have no usable text layer (scans, faxes, photographed pages) with OCR, no model.

- :mod:`.settings`: the options (``ocr``, ``ocr_engine``, ``ocr_languages``, ``ocr_workers``), checked.
- :mod:`.detect`: which pages need OCR. A page has a usable text layer unless it has no words (fewer than
  16 visible characters, or 4 of a wide East Asian script), or only a few stray glyphs (under 100 visible
  characters: a Bates number, a fax header) over a page-size picture (90% of the page or more).
- :mod:`.tessdata`: where Tesseract's language data is (``TESSDATA_PREFIX``, the environment's
  ``share/tessdata`` that the ``[ocr]`` extra fills, the system's ``tesseract-ocr-*`` packages).
- :mod:`.engines`: Tesseract through PyMuPDF (MuPDF contains it), and RapidOCR; both answer PyMuPDF's
  ``dict`` text layout (blocks of lines of spans, in page points), so OCR'd pages go through the same
  reading-order, heading, list and paragraph rules as a text layer.
- :mod:`.pool`: pages OCR'd in worker processes (MuPDF's Tesseract cannot run in two threads of one process).

The strategies, ``indexing``, ``index_key``, the loaders and the command line import it; it imports ``pdf``,
``tables`` and ``errors``.
"""

from __future__ import annotations

from .settings import (
    DEFAULT_OCR_DPI,
    OCR_ENGINES,
    OCR_MODES,
    OcrEngine,
    OcrMode,
    OcrSettings,
    install_hint,
    ocr_settings,
)

__all__ = [
    "DEFAULT_OCR_DPI",
    "OCR_ENGINES",
    "OCR_MODES",
    "OcrEngine",
    "OcrMode",
    "OcrSettings",
    "install_hint",
    "ocr_settings",
]
