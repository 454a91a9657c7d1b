"""``DocumentLoaderRAG``: wrap any ExtractThinker loader; hand the extractor only the best-matching pages."""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from io import BytesIO
from typing import Any

from extract_thinker.document_loader.document_loader import DocumentLoader

from ..errors import DocumentLoadError, InvalidOptionError, NoMatchError
from ..inputs.sources import check_source_file
from ..retrieval.base import PageRetriever, check_max_pages
from ..retrieval.page_text import Page, page_list, page_text_fields
from ..retrieval.sqlite import PageMatch, SQLitePageRetriever, require_query_words
from .selection import PageSelection

__all__ = ["KEPT_DOCUMENTS", "DocumentLoaderRAG", "document_id"]

#: How many documents the loader's own in-memory retriever keeps: those of the latest loads, so that a
#: document loaded again (``load_pages`` after ``load``, the extractor's second look) is not indexed again,
#: while a long run over many documents holds a few of them, not all.
KEPT_DOCUMENTS = 4


def document_id(pages: Iterable[Page] | str | Mapping[str, Any]) -> str:
    """A document id derived from the indexed text of its pages: equal text, equal id.

    The id covers exactly what the retriever stores, so the same file read by two loaders that extract
    different text gets two ids, and an unchanged document is never indexed twice. Pages are read as
    :meth:`SQLitePageRetriever.index` reads them: a lone string or dict is one page.

    Raises:
        InvalidOptionError: ``pages`` or one of them is not a page.
    """
    listed = page_list(pages)
    digest = hashlib.sha256()
    digest.update(f"pages:{len(listed)}\n".encode())
    for page in listed:
        for field in page_text_fields(page):
            encoded = field.encode("utf-8")  # page_text_fields leaves no surrogate to encode
            digest.update(len(encoded).to_bytes(8, "big"))
            digest.update(encoded)
    return "sha256:" + digest.hexdigest()


def _as_pages(loaded: Any, loader: Any, source: Any) -> list[dict[str, Any]]:
    """The wrapped loader's output as a list of page dicts (a lone string or dict is one page).

    Raises:
        DocumentLoadError: the loader returned something that is not pages.
    """
    try:
        pages = page_list(loaded)
    except InvalidOptionError as exc:
        raise DocumentLoadError(
            f"{type(loader).__name__} returned unusable pages for {_describe(source)}: {exc}"
        ) from exc
    return [dict(page) if isinstance(page, Mapping) else {"content": page} for page in pages]


def _describe(source: Any) -> str:
    if isinstance(source, (str, os.PathLike)):
        return repr(os.fspath(source))
    return f"the {type(source).__name__} source"


class DocumentLoaderRAG(PageSelection, DocumentLoader):
    """Load a document with another loader, then keep only the pages that best match a query.

    The wrapped loader reads the whole document (retrieval cuts what the model reads, not parsing work).
    In vision mode, a wrapped loader with ``load_text`` and ``page_images`` (this package's
    ``DocumentLoaderPyMuPDF`` and ``DocumentLoaderPageIndex``) reads the text first and draws only the
    kept pages; any other loader is asked for every page with its image, as ``load`` gives them.
    Its pages are indexed in a :class:`SQLitePageRetriever` under an id derived from their text, searched
    with ``query``, and up to ``max_pages`` of them are returned **in source order**, each page dict as the
    wrapped loader made it (images and other keys kept). A page without ``page_number`` gets its 1-based
    position in the source; an existing ``page_number`` is never changed.

    Args:
        loader: Any ExtractThinker document loader (for example :class:`DocumentLoaderPyMuPDF`).
        query: The words to look for; they are OR-ed together and no syntax is interpreted.
        max_pages: How many pages to keep at most.
        retriever: A retriever to index into and search (shared, possibly file-backed: an
            ``SQLitePageRetriever`` file, or a ``PostgresPageRetriever`` shared by many machines). It is
            never closed by this loader, and every document indexed into it stays there. Without one, the
            loader owns an in-memory retriever, closed on ``close()``, that keeps only the documents of
            the latest ``KEPT_DOCUMENTS`` (4) loads: a document loaded again soon is not indexed again, and
            a run over thousands of documents holds four of them, not all (an older one loaded again is
            indexed again).
        content: Passed to ExtractThinker's ``DocumentLoader``.
        cache_ttl: Passed to ExtractThinker's ``DocumentLoader``.

    Limits: matching is lexical (synonyms and text only in images are missed), and ``max_pages`` limits
    pages, not tokens. ``last_matches`` holds the matches of the most recent ``load`` in any thread (and is
    emptied when a load starts, so a load that fails leaves it empty); use :meth:`load_with_matches` when
    several threads share the loader.
    """

    def __init__(
        self,
        loader: DocumentLoader,
        query: str,
        max_pages: int = 5,
        retriever: PageRetriever | None = None,
        *,
        content: Any = None,
        cache_ttl: int = 300,
    ) -> None:
        super().__init__(content, cache_ttl)
        if not hasattr(loader, "load"):
            raise InvalidOptionError(
                f"loader must be an ExtractThinker document loader, not {type(loader).__name__}."
            )
        require_query_words(query)
        check_max_pages(max_pages)
        if retriever is not None and (
            isinstance(retriever, type)
            or not all(callable(getattr(retriever, name, None)) for name in ("index", "search"))
        ):
            # What the framework's wrapper asks of a retriever: index and search (one of your own, or a
            # wrapper around one, is used as it is; `document_id in retriever`, when it answers, spares
            # indexing a document twice).
            raise InvalidOptionError(
                "retriever must be a page retriever (SQLitePageRetriever, PostgresPageRetriever, or one with "
                f"index(document_id, pages) and search(document_id, query, max_pages)), not "
                f"{type(retriever).__name__}."
            )
        self.loader = loader
        # The wrapped loader's vision mode at construction, as ExtractThinker's own wrapper takes it.
        self.vision_mode = bool(getattr(loader, "vision_mode", False))
        self.query = query
        self.max_pages = max_pages
        self._owns_retriever = retriever is None
        self.retriever: PageRetriever = retriever if retriever is not None else SQLitePageRetriever()
        self.last_matches: list[PageMatch] = []
        self._formats: list[str] | None = None  # set by assigning SUPPORTED_FORMATS, as on the framework's
        self._matches_lock = threading.Lock()
        # The owned retriever's documents, latest load last; guarded with the index-search step, so a
        # thread's document is never dropped between its index and its search.
        self._kept: OrderedDict[str, None] = OrderedDict()
        self._kept_lock = threading.Lock()

    #: ``load_pages`` positions count the retrieved pages (in source order), not the document's.
    _positions_count = "the set the query retrieved"

    # -- the framework's loader protocol, delegated to the wrapped loader ----------------------------

    @property
    def SUPPORTED_FORMATS(self) -> list[str]:
        """The wrapped loader's formats, unless set on this wrapper (as the framework's wrapper allows)."""
        if self._formats is not None:
            return list(self._formats)
        return list(getattr(self.loader, "SUPPORTED_FORMATS", []))

    @SUPPORTED_FORMATS.setter
    def SUPPORTED_FORMATS(self, formats: list[str]) -> None:
        self._formats = list(formats)

    def can_handle(self, source: str | BytesIO) -> bool:
        """Whether the wrapped loader handles the source (a loader of your own may take names that are no
        local files: keys of a store, say).

        Raises:
            DocumentLoadError: the wrapped loader does not handle it, and it is a path with an extension
                that loader supports but no such file exists: named, rather than leaving the framework's
                "No suitable document loader found" (see
                :func:`~extract_thinker_pageindex.inputs.sources.check_source_file`).
        """
        if self.loader.can_handle(source):
            return True
        check_source_file(source, self.SUPPORTED_FORMATS)
        return False

    def can_handle_vision(self, source: str | BytesIO) -> bool:
        return bool(self.loader.can_handle_vision(source))

    def can_handle_paginate(self, source: str | BytesIO) -> bool:
        return bool(self.loader.can_handle_paginate(source))

    def set_vision_mode(self, enabled: bool = True) -> None:
        super().set_vision_mode(enabled)
        self.loader.set_vision_mode(enabled)

    def set_max_image_size(self, size: int) -> None:
        super().set_max_image_size(size)
        self.loader.set_max_image_size(size)

    # -- loading ------------------------------------------------------------------------------------

    def load_with_matches(self, source: Any) -> tuple[list[dict[str, Any]], list[PageMatch]]:
        """Load the best pages of a source together with the matches that chose them.

        Returns:
            The selected page dicts in source order, and the matches in relevance order.

        Raises:
            NoMatchError: no page holds any word of the query.
            DocumentLoadError: the wrapped loader returned something that is not pages.
            Whatever the wrapped loader or the retriever raises.
        """
        # A failed load must not leave the previous document's matches looking like this one's.
        with self._matches_lock:
            self.last_matches = []
        # In vision mode, a loader that loads in two steps (this package's) gives its text first and then
        # draws only the pages kept: a 136-page filing was drawn whole (38 s, 30 MB of PNG) to keep 3.
        # The wrapped loader's own vision mode decides (set_vision_mode on this wrapper is passed on to it).
        two_step = bool(getattr(self.loader, "vision_mode", False)) and all(
            callable(getattr(self.loader, name, None)) for name in ("load_text", "page_images")
        )
        loaded = self.loader.load_text(source) if two_step else self.loader.load(source)
        pages = _as_pages(loaded, self.loader, source)
        doc_id = document_id(pages)
        if self._owns_retriever:
            with self._kept_lock:
                matches = self._index_and_search(doc_id, pages)
                self._kept[doc_id] = None
                self._kept.move_to_end(doc_id)
                while len(self._kept) > KEPT_DOCUMENTS:
                    self.retriever.delete(self._kept.popitem(last=False)[0])
        else:
            matches = self._index_and_search(doc_id, pages)
        if not matches:
            raise NoMatchError(
                f"No pages matched {self.query!r} in {_describe(source)}; broaden the query or load the "
                "whole document with the wrapped loader."
            )
        selected = []
        for match in sorted(matches, key=lambda item: item.page_number):
            page = dict(pages[match.page_number - 1])
            page.setdefault("page_number", match.page_number)
            selected.append(page)
        if two_step:
            images = self.loader.page_images(source, [page["page_number"] for page in selected])
            for page in selected:
                if page["page_number"] in images:
                    page["image"] = images[page["page_number"]]
        with self._matches_lock:
            self.last_matches = list(matches)
        return selected, list(matches)

    def _index_and_search(self, doc_id: str, pages: list[dict[str, Any]]) -> list[PageMatch]:
        # A retriever that cannot say what it holds (one of your own with index and search only) indexes
        # each load, as the framework's wrapper does.
        knows = callable(getattr(type(self.retriever), "__contains__", None))
        if not knows or doc_id not in self.retriever:
            self.retriever.index(doc_id, pages)
        return self.retriever.search(doc_id, self.query, max_pages=self.max_pages)

    def load(self, source: Any) -> list[dict[str, Any]]:
        """Load the ``max_pages`` pages of a source that best match the query, in source order.

        Raises:
            NoMatchError: no page holds any word of the query.
            Whatever the wrapped loader raises for the source.
        """
        pages, _ = self.load_with_matches(source)
        return pages

    # -- lifecycle ----------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the retriever if this loader created it; a retriever passed in is left open."""
        if self._owns_retriever:
            self.retriever.close()

    def __enter__(self) -> DocumentLoaderRAG:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
