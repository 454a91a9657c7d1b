"""Building a page index: one entry point, ``build_index``, that picks the strategy for the source kind."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from .document.model import (
    Document,
    FailedPage,
    HeadingNode,
    ModelUsage,
    Page,
    PageOrigin,
    PageRefinement,
    TocEntry,
)
from .errors import InvalidOptionError, ModelRequiredError, PageIndexWarning, UnsupportedFormatError
from .inputs.pages import PageSpec, normalize_page_spec
from .inputs.sources import Source, SourceInput, decode_text, resolve_source
from .llm.client import ModelClient, as_model_client
from .ocr.settings import DEFAULT_OCR_DPI, OcrEngine, OcrMode, OcrSettings, ocr_settings
from .postprocess.continuations import group_continuations
from .postprocess.ids import drop_dangling_references
from .postprocess.selection import restrict_pages, restrict_toc
from .postprocess.toc import place_entries, toc_from_entries, toc_from_sections

__all__ = ["STRATEGIES", "build_index", "index_document"]

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
    tables: bool = True,
    images: bool = True,
    password: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    ocr: OcrMode = "auto",
    ocr_engine: OcrEngine = "tesseract",
    ocr_languages: str | list[str] = "eng",
    ocr_workers: int | None = None,
    ocr_dpi: int = DEFAULT_OCR_DPI,
    abstract_iterations: int = 3,
    abstract_words: int = 150,
    refine_sample: int = 5,
    refine_threshold: float = 0.8,
    refine_iterations: int = 2,
    refine_seed: int = 0,
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
        tables: PDF text strategy: find tables (ruled grids and whitespace-aligned columns) and make table
            nodes of them (on by default; ``False`` leaves their lines as paragraphs).
        images: PDF text strategy: make image nodes with PNG bytes for embedded pictures.
        password: The password of an encrypted PDF.
        progress: Called as ``progress(done, total)`` as pages are read.
        ocr: PDFs: ``"auto"`` reads pages without a usable text layer (scans) with OCR, no model;
            ``"always"`` OCRs every page (replacing the text layer); ``"never"``. Pages OCR cannot read go
            to the vision model when one is given.
        ocr_engine: ``"tesseract"`` (through tesserocr where installed, else inside PyMuPDF) or
            ``"rapidocr"``.
        ocr_languages: Tesseract language codes: ``"eng"``, ``"eng+deu"`` or ``["eng", "deu"]``.
        ocr_workers: Processes that OCR pages side by side (default: the machine's cores).
        ocr_dpi: The resolution pages are drawn at for OCR.
        abstract_iterations: Chain of Density rounds for the abstract (one model call each).
        abstract_words: The abstract's target length in words.
        refine_sample: Pages reviewed by ``refine`` (first, last and a seeded random middle).
        refine_threshold: Reviewed pages scoring under it (0-1) are extracted again.
        refine_iterations: Re-extractions per page at most.
        refine_seed: Seed of the random middle of the refinement sample.
        **metadata: Document fields to set: ``title``, ``author``, ``created_at``, ``updated_at``.

    Returns:
        The validated :class:`Document`.

    Raises:
        UnsupportedFormatError: the source kind or strategy is not supported.
        DocumentLoadError: the source cannot be read (``EmptyDocumentError`` when it has no content).
        PageSpecError: ``pages`` is malformed or out of range.
        ModelRequiredError: ``refine`` (or a page that needs vision) without a model.
        OcrError: ``ocr="always"`` and the OCR engine or its language data is not installed.
    """
    _check_options(strategy, parallel, on_page_error, dpi, metadata)
    reading = ocr_settings(ocr, ocr_engine, ocr_languages, ocr_workers, ocr_dpi)
    # Checked before any page is read, so a bad value never costs model calls.
    for label, value, lowest in (
        ("abstract_iterations", abstract_iterations, 1),
        ("abstract_words", abstract_words, 20),
        ("refine_sample", refine_sample, 1),
        ("refine_iterations", refine_iterations, 0),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < lowest:
            raise InvalidOptionError(f"{label} must be a whole number of at least {lowest}; got {value!r}.")
    if (
        isinstance(refine_threshold, bool)
        or not isinstance(refine_threshold, (int, float))
        or not (0 <= refine_threshold <= 1)
    ):
        raise InvalidOptionError(f"refine_threshold must be between 0 and 1; got {refine_threshold!r}.")
    finish = _Finish(
        abstract=abstract,
        abstract_iterations=abstract_iterations,
        abstract_words=abstract_words,
        refine=refine,
        refine_sample=refine_sample,
        refine_threshold=refine_threshold,
        refine_iterations=refine_iterations,
        refine_seed=refine_seed,
        parallel=parallel,
        baseline=model.usage.as_dict() if isinstance(model, ModelClient) else {},
        pages=pages,
    )
    if refine and model is None:
        raise ModelRequiredError("refine=True re-checks pages with a model; pass model= as well.")
    resolved = resolve_source(source, content_type, doc_name)
    if refine and resolved.kind in ("markdown", "text"):
        raise UnsupportedFormatError(
            "refine=True compares pages with their images; it applies to PDFs and images, not "
            f"{resolved.kind}."
        )

    fields: dict[str, Any] = {}
    if resolved.kind == "markdown":
        if strategy == "vision":
            raise UnsupportedFormatError(
                "Markdown is parsed, not read by a vision model; use strategy='auto'."
            )
        from .strategies.markdown import parse_markdown

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
                "Plain text is parsed, not read by a vision model; pass model= to read it with a model."
            )
        from .strategies.text import parse_text

        text = decode_text(resolved)
        if model is None:
            all_pages = parse_text(text)
        else:
            from .strategies.text_model import extract_text_pages

            parts = text.split("\f")
            selected = normalize_page_spec(pages, len(parts))
            chosen = {
                index: part for index, part in enumerate(parts) if selected is None or index in selected
            }
            client = as_model_client(model)
            result = extract_text_pages(chosen, client, parallel=parallel, on_page_error=on_page_error)
            fields.update(_model_fields(client, result.failures))
            fields.update({key: value for key, value in metadata.items() if value is not None})
            if fields.get("title") is None:
                fields["title"] = _title(client, result.pages)
            return _document(resolved, len(parts), result.pages, None, fields, finish, client)
    elif resolved.kind == "pdf":
        return _build_pdf(
            finish,
            resolved,
            strategy,
            model,
            pages,
            parallel,
            use_outline,
            on_page_error,
            dpi,
            tables,
            images,
            password,
            progress,
            metadata,
            reading,
        )
    else:
        if model is None:
            raise ModelRequiredError(
                f"{resolved.name!r} is an image: reading it needs a vision model; pass model=."
            )
        from .strategies.page_images import image_page
        from .strategies.vision import extract_pages

        normalize_page_spec(pages, 1)
        client = as_model_client(model)
        page = image_page(resolved.data, repr(resolved.name), client.image_limits)
        result = extract_pages(
            [0], lambda _: page, client, parallel=1, on_page_error=on_page_error, progress=progress
        )
        if finish.refine and result.pages:
            fields["refinement"] = _refine(finish, result.pages, lambda _: page, client, dpi)
        fields.update(_model_fields(client, result.failures))
        fields.update({key: value for key, value in metadata.items() if value is not None})
        if fields.get("title") is None:
            fields["title"] = _title(client, result.pages)
        toc = toc_from_entries(result.toc_entries, result.pages) if result.toc_entries else None
        return _document(resolved, 1, result.pages, toc, fields, finish, client)

    kept = restrict_pages(all_pages, normalize_page_spec(pages, len(all_pages)))
    fields.update({key: value for key, value in metadata.items() if value is not None})
    # Markdown (and plain text without a model) is parsed; a model, when given, still writes the abstract.
    writer = as_model_client(model) if model is not None else None
    return _document(resolved, len(all_pages), kept, None, fields, finish, writer)


def _build_pdf(
    finish: _Finish,
    resolved: Source,
    strategy: str,
    model: Any,
    pages: PageSpec | None,
    parallel: int,
    use_outline: bool,
    on_page_error: str,
    dpi: int,
    tables: bool,
    images: bool,
    password: str | None,
    progress: Callable[[int, int], None] | None,
    metadata: dict[str, Any],
    reading: OcrSettings,
) -> Document:
    """A PDF by the text, vision or auto strategy (the text layer, then OCR, then the model)."""
    name = repr(resolved.path.name) if resolved.path is not None else repr(resolved.name)
    fields: dict[str, Any] = {}
    client = as_model_client(model) if model is not None else None
    if strategy == "vision":
        if client is None:
            raise ModelRequiredError(f"strategy='vision' reads {name} with a vision model; pass model=.")
        from .pdf.opening import open_pdf
        from .strategies.page_images import pdf_renderer
        from .strategies.pdf_text import pdf_date
        from .strategies.vision import extract_pages

        with open_pdf(resolved.data, password=password, name=name) as document:
            page_count = document.page_count
            selected = normalize_page_spec(pages, page_count)
            indices = [index for index in range(page_count) if selected is None or index in selected]
            info = dict(document.metadata or {})
            render = pdf_renderer(document, dpi, client.image_limits)
            result = extract_pages(
                indices, render, client, parallel=parallel, on_page_error=on_page_error, progress=progress
            )
            if finish.refine and result.pages:
                fields["refinement"] = _refine(finish, result.pages, render, client, dpi)
        fields.update(
            title=(info.get("title") or "").strip() or None,
            author=(info.get("author") or "").strip() or None,
            created_at=pdf_date(info.get("creationDate")),
            updated_at=pdf_date(info.get("modDate")),
        )
        fields.update(_model_fields(client, result.failures))
        fields.update({key: value for key, value in metadata.items() if value is not None})
        if fields.get("title") is None:
            fields["title"] = _title(client, result.pages)
        toc = toc_from_entries(result.toc_entries, result.pages) if result.toc_entries else None
        return _document(resolved, page_count, result.pages, toc, fields, finish, client)

    from .strategies.pdf_text import parse_pdf_text

    if reading.mode == "always":
        from .ocr.settings import require_engine

        require_engine(reading)
    text = parse_pdf_text(
        resolved.data,
        name=name,
        pages=pages,
        use_outline=use_outline,
        tables=tables,
        images=images,
        password=password,
        progress=progress,
        ocr=reading if reading.enabled else None,
    )
    built = text.pages
    for page in built:
        engine = text.ocr_read.get(page.index)
        page.origin = PageOrigin(source="ocr", engine=engine) if engine else PageOrigin(source="text_layer")
    if text.ocr_missing and (client is not None or strategy != "auto"):
        _ocr_missing(resolved.name, text.ocr_missing, reading)  # (without a model, the refusal says it)
    # Pages OCR read and found nothing on (a photograph, a blank scan) have no text to give, and those the
    # engine failed on were warned about and keep their text layer, as under strategy="text" (the other
    # pages go on); a model, when there is one, still looks at them.
    tried = set(text.ocr_read) | set(text.ocr_failed)
    unread = [index for index in text.pages_without_text if client is not None or index not in tried]
    if strategy == "auto" and unread:
        if client is None:
            _pages_need_vision(resolved.name, unread, on_page_error, reading, bool(text.ocr_missing))
        else:
            from .pdf.opening import open_pdf
            from .strategies.page_images import pdf_renderer
            from .strategies.vision import extract_pages

            with open_pdf(resolved.data, password=password, name=name) as document:
                read = extract_pages(
                    unread,
                    pdf_renderer(document, dpi, client.image_limits),
                    client,
                    parallel=parallel,
                    on_page_error=on_page_error,
                )
            by_index = {page.index: page for page in read.pages}
            built = [by_index.get(page.index, page) for page in built]
            if read.toc_entries and text.toc is None:
                # A scanned printed contents page, read by the model: the TOC comes from it.
                text.toc = toc_from_entries(read.toc_entries, built)
            fields.update(_model_fields(client, read.failures))
    if finish.refine and client is not None and built:
        from .pdf.opening import open_pdf
        from .strategies.page_images import pdf_renderer

        with open_pdf(resolved.data, password=password, name=name) as document:
            fields["refinement"] = _refine(
                finish, built, pdf_renderer(document, dpi, client.image_limits), client, dpi
            )
    fields.update(
        title=text.title, author=text.author, created_at=text.created_at, updated_at=text.updated_at
    )
    fields.update({key: value for key, value in metadata.items() if value is not None})
    if fields.get("title") is None:
        fields["title"] = _title(client, built) if client is not None else _first_top_heading(built)
    return _document(resolved, text.page_count, built, text.toc, fields, finish, client)


def _model_fields(client: ModelClient, failures: list[Any]) -> dict[str, Any]:
    # Usage is filled in by _document, once every call of the build has been made.
    return {"failed_pages": [FailedPage(index=failure.index, reason=failure.reason) for failure in failures]}


def _title(client: ModelClient, pages: list[Page]) -> str | None:
    from .postprocess.title import infer_title

    return infer_title(client, pages) or _first_top_heading(pages)


@dataclass
class _Finish:
    """The post-processing options every builder's result goes through."""

    abstract: bool
    abstract_iterations: int
    abstract_words: int
    refine: bool
    refine_sample: int
    refine_threshold: float
    refine_iterations: int
    refine_seed: int
    parallel: int
    baseline: dict[str, int]  # the model client's usage when the build started
    pages: PageSpec | None = None  # the page selection (checked): the TOC keeps only its pages


def _refine(
    finish: _Finish, pages: list[Page], render: Callable[[int], Any], client: ModelClient, dpi: int
) -> list[PageRefinement]:
    """Review sampled pages against their images and read weak ones again with the reviewer's findings."""
    from .postprocess.refine import refine_pages
    from .strategies.vision import PAGE_OBJECTIVE, extract_pages

    def reextract(index: int, problems: list[str]) -> Page:
        findings = "\n".join(f"- {problem}" for problem in problems) or "- (no details given)"
        notes = (
            "A reviewer checked an earlier extraction of this page and found these problems; avoid them:\n"
            + findings
        )
        read = extract_pages([index], render, client, parallel=1, objective=PAGE_OBJECTIVE, notes=notes)
        return read.pages[0]

    results = refine_pages(
        pages,
        lambda index: render(index).png,
        reextract,
        client,
        sample=finish.refine_sample,
        threshold=finish.refine_threshold,
        iterations=finish.refine_iterations,
        parallel=finish.parallel,
        seed=finish.refine_seed,
    )
    if any(result.reextractions for result in results):
        from .strategies.vision import nest_across_pages

        nest_across_pages(pages)  # a page read again alone rejoins the sections open before it
    return results


def _document(
    source: Source,
    page_count: int,
    pages: list[Page],
    toc: list[TocEntry] | None,
    fields: dict[str, Any],
    finish: _Finish,
    client: ModelClient | None,
) -> Document:
    """The document, after the steps every builder shares: continuations grouped, references checked,
    the TOC generated when none was read (and its entries placed on their headings' boxes), and the
    abstract written when a model is configured."""
    for key in ("created_at", "updated_at"):
        if isinstance(fields.get(key), str):
            fields[key] = datetime.fromisoformat(fields[key])
    group_continuations(pages)
    drop_dangling_references(pages, [])  # the TOC is generated from sections: they must be sound first
    toc = toc if toc is not None else toc_from_sections(pages, cover=source.extension == "pdf")
    # One rule for every builder: a selection's TOC lists only the pages in it (an outline or a printed
    # contents page names every page of the source).
    toc = restrict_toc(toc, normalize_page_spec(finish.pages, page_count))
    drop_dangling_references(pages, toc)
    place_entries(toc, pages)
    document = Document(
        name=source.name,
        extension=source.extension,
        source_file=source.path.name if source.path is not None else None,
        source_page_count=page_count,
        pages=pages,
        toc=toc,
        **fields,
    )
    if client is not None and finish.abstract and not document.abstract:
        from .postprocess.abstract import chain_of_density

        written = chain_of_density(
            client, document, iterations=finish.abstract_iterations, words=finish.abstract_words
        )
        document = document.model_copy(update={"abstract": written})
    if client is not None:
        # Taken last, after every call (pages, title, abstract, refinement), and for this build only.
        now = client.usage.as_dict()
        used = {key: now[key] - finish.baseline.get(key, 0) for key in now}
        document = document.model_copy(update={"usage": ModelUsage(**used)})
    return document


def _first_top_heading(pages: list[Page]) -> str | None:
    """The first heading of the smallest level present: the fallback title."""
    headings = [node for page in pages for node in page.nodes if isinstance(node, HeadingNode)]
    if not headings:
        return None
    top = min(node.level for node in headings)
    return next(node.content for node in headings if node.level == top)


def _ocr_missing(name: str, page_indices: list[int], reading: OcrSettings) -> None:
    """Pages that needed OCR under ``ocr="auto"``, with no engine installed: say so once."""
    from .ocr.settings import engine_problem, install_hint

    numbers = ", ".join(str(index + 1) for index in page_indices)
    warnings.warn(
        f"Page(s) {numbers} of {name!r} have no usable text layer (scanned or pictures only) and were not "
        f"OCR'd: {engine_problem(reading)}. Install it: {install_hint(reading)}.",
        PageIndexWarning,
        stacklevel=4,
    )


def _pages_need_vision(
    name: str, page_indices: list[int], on_page_error: str, reading: OcrSettings, ocr_missing: bool
) -> None:
    """Pages without a text layer that OCR did not read, under the auto strategy and without a model:
    warn, or refuse."""
    from .ocr.settings import engine_problem, install_hint

    numbers = ", ".join(str(index + 1) for index in page_indices)
    ocr_hint = "" if reading.enabled else ", ocr='auto' to read them with OCR"
    if ocr_missing:
        ocr_hint = f" ({engine_problem(reading)}: to read them with OCR, {install_hint(reading)})"
    if on_page_error == "skip":
        warnings.warn(
            f"Page(s) {numbers} of {name!r} have no text layer (scanned or pictures only) and were kept "
            f"empty; pass model= to read them with a vision model{ocr_hint}.",
            PageIndexWarning,
            stacklevel=3,
        )
        return
    raise ModelRequiredError(
        f"Page(s) {numbers} of {name!r} have no text layer (scanned or pictures only). Pass model= to read "
        f"them with a vision model{ocr_hint}, strategy='text' to keep them empty, or on_page_error='skip'."
    )


def index_document(
    path: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    *,
    overwrite: bool = False,
    **options: Any,
) -> tuple[Document, Path]:
    """Build the page index of a file and save it as ``<name>.pageindex/``.

    Args:
        path: The source file.
        output: Where to write the index directory; defaults to ``<stem>.pageindex`` beside the source.
        overwrite: Replace an index of another file found at the output (``report.md`` and
            ``report.pdf`` both default to ``report.pageindex``); see :func:`save_index`.
        **options: Passed to :func:`build_index` (``strategy``, ``pages``, ``model``, ...).

    Returns:
        The document and the path of the written directory.

    Raises:
        Whatever :func:`build_index` and :func:`save_index` raise. An existing index is left as it was
        unless the new one was written completely.
    """
    from .document.store import check_replaceable, default_output_path, save_index

    if output is None and not os.path.isfile(path) and options.get("content_type") is not None:
        raise InvalidOptionError("index_document() needs output= when the source is a string, not a file.")
    target = Path(output) if output is not None else default_output_path(path)
    if not overwrite and os.path.isfile(path):
        # Refused before the build: no model call is paid for an index that would not be saved.
        check_replaceable(target, Document(name=Path(path).stem, source_file=Path(path).name))
    document = build_index(path, **options)
    save_index(document, target, overwrite=overwrite)
    return document, target
