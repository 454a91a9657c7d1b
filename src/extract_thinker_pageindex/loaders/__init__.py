"""Document loaders that follow ExtractThinker's loader protocol."""

from .pymupdf_config import PyMuPDFConfig

__all__ = ["PyMuPDFConfig"]
