"""The exceptions and warnings raised by extract-thinker-pageindex.

Every error derives from ``PageIndexError`` and also from the builtin it refines, so callers can catch
either the project's base class or the builtin they already handle::

    PageIndexError
    ├── InvalidOptionError (ValueError)       an argument has a value that cannot work
    ├── UnsupportedFormatError (ValueError)   the source kind or option is not supported
    ├── DocumentLoadError (ValueError)        the source cannot be read (missing, corrupt, encrypted)
    │   └── EmptyDocumentError                the source has no content to index
    ├── PageSpecError (ValueError)            a page selection is malformed or out of range
    ├── NoMatchError (LookupError, ValueError) retrieval found no page for the query
    ├── ModelRequiredError (ValueError)       the work needs a model and none was configured
    ├── LLMExtractionError (RuntimeError)     a model call failed or answered unusably
    ├── IndexFormatError (ValueError)         a saved .pageindex directory is invalid
    ├── OutputExistsError (FileExistsError)   refusing to replace something that is not a page index
    ├── OutputWriteError (OSError)            the output cannot be written: a read-only folder or file
    │                                         system, a full disk (``errno`` as the system gave it)
    ├── OcrError (RuntimeError)               OCR cannot run as asked: no engine or language data, or
    │                                         the engine failed on a page
    ├── RetrieverClosedError (RuntimeError)   a closed retriever was used
    └── RetrieverError (RuntimeError)         the retriever's database failed: full disk, read-only,
        │                                     locked past the timeout, I/O
        └── RetrieverConnectionError          the retriever's database server cannot be reached, or
                                              went away and did not come back

    PageIndexWarning (UserWarning)            degraded but usable results
"""

from __future__ import annotations

__all__ = [
    "DocumentLoadError",
    "EmptyDocumentError",
    "IndexFormatError",
    "InvalidOptionError",
    "LLMExtractionError",
    "ModelRequiredError",
    "NoMatchError",
    "OutputExistsError",
    "OcrError",
    "OutputWriteError",
    "PageIndexError",
    "PageIndexWarning",
    "PageSpecError",
    "RetrieverClosedError",
    "RetrieverConnectionError",
    "RetrieverError",
    "UnsupportedFormatError",
]


class PageIndexError(Exception):
    """Base class of every error raised by extract-thinker-pageindex."""


class InvalidOptionError(PageIndexError, ValueError):
    """An argument has a value that cannot work: ``parallel=0``, ``max_pages=-1``, a query with no words."""


class UnsupportedFormatError(PageIndexError, ValueError):
    """The source's kind, extension or content type (or an option for it) is not supported."""


class DocumentLoadError(PageIndexError, ValueError):
    """The source could not be read: missing, unreadable, corrupt, encrypted or not what its name says."""


class EmptyDocumentError(DocumentLoadError):
    """The source was read but holds nothing to index."""


class PageSpecError(PageIndexError, ValueError):
    """A page selection is malformed, reversed, empty or outside the document."""


class NoMatchError(PageIndexError, LookupError, ValueError):
    """Retrieval found no page for the query (a ``ValueError`` too, as ExtractThinker's own
    ``DocumentLoaderRAG`` raises one), or a document or page asked for is not indexed."""


class ModelRequiredError(PageIndexError, ValueError):
    """The requested work needs a model (vision pages, abstract, refinement) and none was configured."""


class LLMExtractionError(PageIndexError, RuntimeError):
    """A model call failed after its retries, or answered with something that cannot be used."""


class IndexFormatError(PageIndexError, ValueError):
    """A saved page index is invalid: unknown format version, broken JSON, bad references or image paths."""


class OutputExistsError(PageIndexError, FileExistsError):
    """The output path exists and is not a page index directory, so it is not replaced."""


class OutputWriteError(PageIndexError, OSError):
    """The output cannot be written: a folder or file system that is read-only, a full disk, a quota used
    up. ``errno`` is the operating system's number and the ``OSError`` is the ``__cause__``; what was at
    the output before is left as it was."""


class OcrError(PageIndexError, RuntimeError):
    """OCR cannot run as asked: the engine or a language's data is not installed (``ocr="always"``, or an
    engine named explicitly), or the engine failed on a page."""


class RetrieverClosedError(PageIndexError, RuntimeError):
    """A retriever was used after ``close()``."""


class RetrieverError(PageIndexError, RuntimeError):
    """The retriever's database failed: full disk, read-only, locked past the timeout, I/O.

    A damaged file or one that is no retriever index is an ``IndexFormatError`` instead.
    """


class RetrieverConnectionError(RetrieverError):
    """The retriever's database server cannot be reached (a wrong address, a refused login, a database
    that does not exist), or the connection was lost and a second attempt failed too."""


class PageIndexWarning(UserWarning):
    """A result is usable but degraded (a reference dropped, an outline ignored, a page skipped)."""
