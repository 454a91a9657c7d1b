"""``DocumentLoaderPageIndex``: a framework loader that serves a document's page index, page by page.

The index is built once (by whichever strategy the options say) and kept in an on-disk cache keyed by the
content's hash and the options that change the result, so the second load of a file makes no model call.
"""

from __future__ import annotations

import inspect as pyinspect
import os
import shutil
import uuid
import warnings
from collections.abc import Sequence
from io import BytesIO
from pathlib import Path
from typing import Any, ClassVar

from extract_thinker.document_loader.document_loader import DocumentLoader

from ..document.model import Document
from ..document.render import page_markdown, page_sections
from ..errors import (
    IndexFormatError,
    InvalidOptionError,
    OutputExistsError,
    PageIndexWarning,
    UnsupportedFormatError,
)
from ..index_key import cache_key
from ..inputs.sources import EXTENSION_KINDS
from .file_sources import FileSources
from .selection import PageSelection

__all__ = ["DocumentLoaderPageIndex", "default_cache_dir"]


def default_cache_dir() -> Path:
    """``$EXTRACT_THINKER_PAGEINDEX_CACHE``, else ``$XDG_CACHE_HOME/extract-thinker-pageindex``, else
    ``~/.cache/extract-thinker-pageindex``."""
    explicit = os.environ.get("EXTRACT_THINKER_PAGEINDEX_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "extract-thinker-pageindex"


class DocumentLoaderPageIndex(PageSelection, FileSources, DocumentLoader):
    """Load a document as its page index: one dict per page, ready for ExtractThinker.

    Each page dict has ``content`` (the page rendered as Markdown from its nodes: headings with their
    levels, paragraphs, lists, tables, image descriptions), ``markdown`` (the same), ``page_number``
    (1-based), ``sections`` (the heading paths the page's content belongs to, "Part II > Item 7"),
    ``section_descriptions``, ``nodes`` (the page's nodes as dicts) and, in vision mode, ``image`` (PNG).
    With :class:`DocumentLoaderRAG` the section titles and descriptions are indexed as weighted fields.

    Args:
        content: Passed to ExtractThinker's ``DocumentLoader``.
        cache_ttl: Passed to ExtractThinker's ``DocumentLoader``.
        cache_dir: Where built indexes are kept (see :func:`default_cache_dir`); ``False`` for no cache.
        **options: Passed to :func:`build_index` (``strategy``, ``model``, ``pages``, ``use_outline``, ...).

    Raises:
        TypeError: an option that ``build_index`` does not take.
    """

    SUPPORTED_FORMATS: ClassVar[list[str]] = sorted(extension.lstrip(".") for extension in EXTENSION_KINDS)

    def __init__(
        self,
        content: Any = None,
        cache_ttl: int = 300,
        *,
        cache_dir: str | os.PathLike[str] | bool | None = None,
        **options: Any,
    ) -> None:
        super().__init__(content, cache_ttl)
        from ..indexing import build_index

        accepted = set(pyinspect.signature(build_index).parameters) - {"source", "metadata"}
        unknown = sorted(set(options) - accepted - {"title", "author", "created_at", "updated_at"})
        if unknown:
            raise TypeError(f"DocumentLoaderPageIndex got unknown option(s) {', '.join(unknown)}.")
        self.options = options
        self.cache_dir: Path | None
        if cache_dir is False:
            self.cache_dir = None
        elif cache_dir is None or cache_dir is True:
            self.cache_dir = default_cache_dir()
        else:
            self.cache_dir = Path(cache_dir)
        self.last_document: Document | None = None
        self.last_from_cache = False

    # -- the cache ------------------------------------------------------------------------------------

    def cache_key(self, data: bytes, content_type: str | None) -> str:
        """The content's hash with the options that change the index (and the versions that build it)."""
        return cache_key(data, content_type, self.options)

    def _document(self, source: Any) -> tuple[Document, bytes, str | None]:
        from ..document.store import load_index, save_index
        from ..indexing import build_index

        data, content_type, name, extension = _read(source)
        self.last_from_cache = False
        cached = (
            self.cache_dir / f"{self.cache_key(data, content_type)}.pageindex" if self.cache_dir else None
        )
        if cached is not None and os.path.lexists(cached):
            try:
                self.last_from_cache = True
                return load_index(cached), data, content_type
            except IndexFormatError:
                # A damaged entry is rebuilt, not trusted; it sits under a name this loader made in its
                # own cache, so it is removed first (a save refuses to replace what is not an index).
                self.last_from_cache = False
                _discard(cached)
        options = {"doc_name": name, **self.options}
        document = build_index(data, content_type=content_type, **options)
        if extension:
            document = document.model_copy(update={"extension": extension})
        if cached is not None:
            try:
                save_index(document, cached)
            except (OutputExistsError, InvalidOptionError, OSError) as exc:
                # The cache only saves work: the index just built is served all the same.
                warnings.warn(
                    f"The page index cache could not be written ({exc}); the index is used without it.",
                    PageIndexWarning,
                    stacklevel=3,
                )
        return document, data, content_type

    # -- the framework's loader protocol --------------------------------------------------------------

    def load(self, source: Any) -> list[dict[str, Any]]:
        """The page index of a source as page dicts, built or taken from the cache.

        Raises:
            Whatever :func:`build_index` raises for the source (DocumentLoadError, ModelRequiredError...).
        """
        return self._load(source, images=self.vision_mode)

    def load_text(self, source: Any) -> list[dict[str, Any]]:
        """The pages as :meth:`load` gives them, without images whatever the vision mode: the first step of
        a two-step load (:class:`DocumentLoaderRAG` draws only the pages it keeps, with
        :meth:`page_images`).

        Raises:
            As :meth:`load`.
        """
        return self._load(source, images=False)

    def page_images(self, source: Any, page_numbers: Sequence[int]) -> dict[int, bytes]:
        """The PNG images :meth:`load` attaches in vision mode, of the pages numbered ``page_numbers``
        (1-based) only. Drawn from the source itself: the page index is not needed for them.

        Raises:
            DocumentLoadError: the source cannot be read.
        """
        data, content_type, _, _ = _read(source)
        return {
            index + 1: png
            for index, png in self._images(data, content_type, [n - 1 for n in page_numbers]).items()
        }

    def _load(self, source: Any, *, images: bool) -> list[dict[str, Any]]:
        document, data, content_type = self._document(source)
        self.last_document = document
        sections = page_sections(document)
        drawn = self._images(data, content_type, [page.index for page in document.pages]) if images else {}
        pages = []
        for page in document.pages:
            text = page_markdown(page)
            paths, descriptions = sections[page.index]
            item: dict[str, Any] = {
                "content": text,
                "markdown": text,
                "page_number": page.index + 1,
                "sections": paths,
                "section_descriptions": descriptions,
                "nodes": [node.model_dump(exclude={"image_data"}) for node in page.nodes],
            }
            if page.index in drawn:
                item["image"] = drawn[page.index]
            pages.append(item)
        return pages

    def _images(self, data: bytes, content_type: str | None, indices: Sequence[int]) -> dict[int, bytes]:
        """PNG images of the pages at 0-based ``indices`` of a PDF or image source (none for text)."""
        if content_type == "pdf":
            from ..pdf.images import render_page_png
            from ..pdf.opening import PYMUPDF_LOCK, open_pdf

            dpi = int(self.options.get("dpi", 150))
            with open_pdf(data, password=self.options.get("password")) as pdf, PYMUPDF_LOCK:
                return {
                    index: render_page_png(pdf[index], dpi)
                    for index in dict.fromkeys(indices)
                    if 0 <= index < pdf.page_count
                }
        if content_type == "image" and 0 in indices:
            from ..strategies.page_images import image_page

            return {0: image_page(data, "The image").png}  # bounded and turned upright, as the model saw it
        return {}

    def can_handle_vision(self, source: str | BytesIO) -> bool:
        """PDFs and images have page images; Markdown and text do not."""
        if isinstance(source, str):
            return EXTENSION_KINDS.get(Path(source).suffix.lower()) in ("pdf", "image")
        return isinstance(source, BytesIO) and _sniff(source.getvalue()) in ("pdf", "image")


def _discard(entry: Path) -> None:
    """Remove a damaged cache entry: moved aside first, so a concurrent load never sees half of it."""
    aside = entry.with_name(f".{entry.name}.bad-{uuid.uuid4().hex[:12]}")
    try:
        os.rename(entry, aside)
    except OSError:
        return  # already gone (another loader discarded it), or not ours to move
    if aside.is_dir() and not aside.is_symlink():
        shutil.rmtree(aside, ignore_errors=True)
    else:
        aside.unlink(missing_ok=True)


def _sniff(data: bytes) -> str | None:
    if data[:5] == b"%PDF-":
        return "pdf"
    if data[:8] == b"\x89PNG\r\n\x1a\n" or data[:3] == b"\xff\xd8\xff" or data[:6] in (b"GIF87a", b"GIF89a"):
        return "image"
    return None


def _read(source: Any) -> tuple[bytes, str | None, str, str | None]:
    """The source's bytes, its kind for build_index, its name and its extension."""
    from ..inputs.sources import resolve_source

    if isinstance(source, BytesIO):
        data = source.getvalue()
        kind = _sniff(data)
        if kind is None:
            raise UnsupportedFormatError(
                "A stream must be a PDF or an image to be indexed without a name; pass a file path."
            )
        return data, kind, "document", None
    resolved = resolve_source(source)
    return resolved.data, resolved.kind, resolved.name, resolved.extension
