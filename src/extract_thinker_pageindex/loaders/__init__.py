"""Document loaders that follow ExtractThinker's loader protocol: the PyMuPDF loader (with ``pdf_pages``,
a PDF's pages as page dicts), the page index loader and the retrieval wrapper. The package root and the
command line import them; nothing below them does."""

from .pymupdf_config import PyMuPDFConfig

__all__ = ["PyMuPDFConfig"]
