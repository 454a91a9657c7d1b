"""Building a page index: one entry point, ``build_index``, that picks the builder for the source kind."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from ..errors import InvalidOptionError, ModelRequiredError, PageIndexWarning, UnsupportedFormatError
from ..model import Document, HeadingNode, Page, TocEntry
from ..pages import PageSpec, normalize_page_spec
from ..postprocess.selection import restrict_pages
from ..postprocess.toc import toc_from_sections
from ..sources import Source, SourceInput, decode_text, resolve_source

__all__ = ["STRATEGIES", "build_index"]

Strategy = Literal["auto", "text", "vision"]
STRATEGIES: tuple[str, ...] = ("auto", "text", "vision")
_METADATA_FIELDS = ("title", "author", "created_at", "updated_at")


def _check_options(
    strategy: str, parallel: int, on_page_error: str, dpi: int, metadata: dict[str, Any]
) -> None:
    if strategy not in STRATEGIES:
        raise UnsupportedFormatError(f"strategy must be one of {', '.join(STRATEGIES)}; got {strategy!r}.")
    if isinstance(parallel, bool) or not isinstance(parallel, int) or parallel < 1:
        raise InvalidOptionError(f"parallel must be a whole number of at least 1; got {parallel!r}.")
    if on_page_error not in ("raise", "skip"):
        raise InvalidOptionError(f"on_page_error must be 'raise' or 'skip'; got {on_page_error!r}.")
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 36 <= dpi <= 600:
        raise InvalidOptionError(f"dpi must be a whole number from 36 to 600; got {dpi!r}.")
    unknown = sorted(set(metadata) - set(_METADATA_FIELDS))
    if unknown:
        raise TypeError(
            f"build_index() got unexpected keyword argument(s) {', '.join(map(repr, unknown))}; "
            f"document metadata keywords are {', '.join(_METADATA_FIELDS)}."
        )


def build_index(
    source: SourceInput,
    *,
    content_type: str | None = None,
    doc_name: str | None = None,
    strategy: Strategy = "auto",
    model: Any = None,
    pages: PageSpec | None = None,
    parallel: int = 3,
    use_outline: bool = True,
    abstract: bool = True,
    refine: bool = False,
    on_page_error: Literal["raise", "skip"] = "raise",
    dpi: int = 150,
    tables: bool = False,
    images: bool = True,
    password: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    **metadata: Any,
) -> Document:
    """Build the page index of a document.

    Args:
        source: A file path, or the document itself as a string (with ``content_type``), bytes or BytesIO.
        content_type: What the source holds when its name does not say: ``"markdown"``, ``"text"``,
            ``"pdf"`` or a MIME type.
        doc_name: The document's name; defaults to the file name without its extension.
        strategy: ``"auto"``, ``"text"`` or ``"vision"`` (for PDFs; Markdown and text are always parsed).
        model: A litellm model string or an ExtractThinker ``LLM``, for the parts that need a model.
        pages: A 1-based page selection (see :func:`normalize_page_spec`); original page indices are kept.
        parallel: How many pages go to the model at once.
        use_outline: Use a PDF's outline (bookmarks) for headings and the TOC.
        abstract: Write an abstract when a model is configured.
        refine: Re-check and re-extract weak pages with the model (needs a model).
        on_page_error: ``"raise"`` to fail the document when a page fails, ``"skip"`` to record and go on.
        dpi: Resolution at which pages are rendered for the model.
        tables: PDF text strategy: find tables with PyMuPDF's table finder (slow; off by default).
        images: PDF text strategy: make image nodes with PNG bytes for embedded pictures.
        password: The password of an encrypted PDF.
        progress: Called as ``progress(done, total)`` as pages are read.
        **metadata: Document fields to set: ``title``, ``author``, ``created_at``, ``updated_at``.

    Returns:
        The validated :class:`Document`.

    Raises:
        UnsupportedFormatError: the source kind or strategy is not supported.
        DocumentLoadError: the source cannot be read (``EmptyDocumentError`` when it has no content).
        PageSpecError: ``pages`` is malformed or out of range.
        ModelRequiredError: ``refine`` (or a page that needs vision) without a model.
    """
    _check_options(strategy, parallel, on_page_error, dpi, metadata)
    if refine and model is None:
        raise ModelRequiredError("refine=True re-checks pages with a model; pass model= as well.")
    resolved = resolve_source(source, content_type, doc_name)

    fields: dict[str, Any] = {}
    if resolved.kind == "markdown":
        if strategy == "vision":
            raise UnsupportedFormatError(
                "Markdown is parsed, not read by a vision model; use strategy='auto'."
            )
        from .markdown import parse_markdown

        parsed = parse_markdown(decode_text(resolved))
        all_pages = parsed.pages
        fields.update(
            title=parsed.title or (parsed.top_heading_titles[0] if parsed.top_heading_titles else None),
            author=parsed.author,
            created_at=parsed.created_at,
            updated_at=parsed.updated_at,
        )
    elif resolved.kind == "text":
        if strategy == "vision":
            raise UnsupportedFormatError(
                "Plain text is parsed, not read by a vision model; use strategy='auto'."
            )
        from .text import parse_text

        all_pages = parse_text(decode_text(resolved))
    elif resolved.kind == "pdf":
        if strategy == "vision":
            raise UnsupportedFormatError(
                "The vision strategy is not available in this version yet; use strategy='text' or 'auto'."
            )
        from .pdf_text import parse_pdf_text

        result = parse_pdf_text(
            resolved.data,
            name=repr(resolved.path.name) if resolved.path is not None else repr(resolved.name),
            pages=pages,
            use_outline=use_outline,
            tables=tables,
            images=images,
            password=password,
            progress=progress,
        )
        if strategy == "auto" and result.pages_without_text:
            _pages_need_vision(resolved.name, result.pages_without_text, model, on_page_error)
        fields.update(
            title=result.title or _first_top_heading(result.pages),
            author=result.author,
            created_at=result.created_at,
            updated_at=result.updated_at,
        )
        fields.update({key: value for key, value in metadata.items() if value is not None})
        return _document(resolved, result.page_count, result.pages, result.toc, fields)
    else:
        raise UnsupportedFormatError(
            f"Indexing {resolved.kind} sources needs the vision strategy, which is not available in this "
            "version yet; index PDF, Markdown (.md) or plain text (.txt) files."
        )

    kept = restrict_pages(all_pages, normalize_page_spec(pages, len(all_pages)))
    fields.update({key: value for key, value in metadata.items() if value is not None})
    return _document(resolved, len(all_pages), kept, None, fields)


def _document(
    source: Source, page_count: int, pages: list[Page], toc: list[TocEntry] | None, fields: dict[str, Any]
) -> Document:
    for key in ("created_at", "updated_at"):
        if isinstance(fields.get(key), str):
            fields[key] = datetime.fromisoformat(fields[key])
    return Document(
        name=source.name,
        extension=source.extension,
        source_page_count=page_count,
        pages=pages,
        toc=toc if toc is not None else toc_from_sections(pages),
        **fields,
    )


def _first_top_heading(pages: list[Page]) -> str | None:
    """The first heading of the smallest level present: the fallback title."""
    headings = [node for page in pages for node in page.nodes if isinstance(node, HeadingNode)]
    if not headings:
        return None
    top = min(node.level for node in headings)
    return next(node.content for node in headings if node.level == top)


def _pages_need_vision(name: str, page_indices: list[int], model: Any, on_page_error: str) -> None:
    """Pages without a text layer under the auto strategy: a model reads them, or the caller is told."""
    numbers = ", ".join(str(index + 1) for index in page_indices)
    if model is not None:
        raise UnsupportedFormatError(
            f"Page(s) {numbers} of {name!r} have no text layer and need the vision strategy, which is not "
            "available in this version yet; pass on_page_error='skip' to keep them empty."
        )
    if on_page_error == "skip":
        warnings.warn(
            f"Page(s) {numbers} of {name!r} have no text layer (scanned or pictures only) and were kept "
            "empty; pass model= to read them with a vision model.",
            PageIndexWarning,
            stacklevel=3,
        )
        return
    raise ModelRequiredError(
        f"Page(s) {numbers} of {name!r} have no text layer (scanned or pictures only). Pass model= to read "
        "them with a vision model, strategy='text' to keep them empty, or on_page_error='skip'."
    )
