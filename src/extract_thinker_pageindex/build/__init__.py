"""Building a page index: one entry point, ``build_index``, that picks the builder for the source kind."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from ..errors import InvalidOptionError, ModelRequiredError, UnsupportedFormatError
from ..model import Document
from ..pages import PageSpec, normalize_page_spec
from ..postprocess.selection import restrict_pages
from ..postprocess.toc import toc_from_sections
from ..sources import SourceInput, decode_text, resolve_source

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
    else:
        raise UnsupportedFormatError(
            f"Indexing {resolved.kind} sources is not available in this version yet; "
            "index Markdown (.md) or plain text (.txt) files."
        )

    kept = restrict_pages(all_pages, normalize_page_spec(pages, len(all_pages)))
    fields.update({key: value for key, value in metadata.items() if value is not None})
    if isinstance(fields.get("created_at"), str):
        fields["created_at"] = datetime.fromisoformat(fields["created_at"])
    if isinstance(fields.get("updated_at"), str):
        fields["updated_at"] = datetime.fromisoformat(fields["updated_at"])
    return Document(
        name=resolved.name,
        extension=resolved.extension,
        source_page_count=len(all_pages),
        pages=kept,
        toc=toc_from_sections(kept),
        **fields,
    )
