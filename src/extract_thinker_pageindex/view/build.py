"""``view_index``: the HTML view of a saved page index, and of a query's matches in it."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DocumentLoadError, InvalidOptionError
from ..inputs.files import check_path
from .output import Staging, check_output, staged_view
from .pages import PageView, ViewNode

if TYPE_CHECKING:
    from ..document.model import Document, Node
    from .matches import QueryResult
    from .pictures import PagePicture, PageSpace, Pictures

__all__ = ["default_view_path", "view_index"]

VIEW_SUFFIX = ".view.html"


def default_view_path(index: str | os.PathLike[str]) -> Path:
    """``<dir>/<name>.view.html`` beside a ``<name>.pageindex`` folder (or the folder of a document.json)."""
    root = _index_root(Path(index))
    if not root.name:  # "." or "document.json" in the current directory
        root = root.resolve()
    stem = root.name[: -len(".pageindex")] if root.name.endswith(".pageindex") else root.name
    return root.parent / f"{stem}{VIEW_SUFFIX}"


def _index_root(path: Path) -> Path:
    return path.parent if path.name == "document.json" else path


def _node_text(node: Node) -> str:
    content = getattr(node, "content", None)
    if content:
        return str(content)
    parts = [getattr(node, "caption", None), getattr(node, "description", None)]
    return "\n".join(part for part in parts if part)


def _node_label(node: Node) -> str:
    label = str(getattr(node, "level", None) or getattr(node, "kind", None) or "")
    return "" if label == node.type else label  # a paragraph's level is mostly "paragraph"


def view_index(
    index: str | os.PathLike[str],
    *,
    source: str | os.PathLike[str] | None = None,
    output: str | os.PathLike[str] | None = None,
    query: str | None = None,
    max_pages: int = 5,
    embed_images: bool = False,
    dpi: int = 96,
    password: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Write an HTML view of a saved page index: its TOC tree, and each page's picture with every node's
    box drawn on it, coloured by type; with ``query``, the best pages for it and the query's words on them.

    The file needs no network: CSS and script are inline, and page pictures are JPEG/PNG files in
    ``<output stem>_files/`` beside it (or inside it with ``embed_images``). Sources without pictures
    (Markdown, text) show each page's nodes as text blocks.

    Args:
        index: The ``<name>.pageindex`` folder (or its ``document.json``).
        source: The indexed file, when it is not the file named as the index folder beside it
            (``report.pageindex`` -> ``report.pdf``). A relative path is tried from the current directory,
            then beside the index. Nothing in the index itself (its ``name``) ever chooses the file drawn.
        output: The HTML file to write; ``<name>.view.html`` beside the index folder by default. Only a
            view (a file opening with the view's header) and a pictures folder holding the view's mark are
            replaced; a killed view's staging folder beside it is removed by the next view.
        query: Words to search for (as ``search`` does, with an in-memory :class:`SQLitePageRetriever`).
        max_pages: How many matches of ``query`` to list and highlight.
        embed_images: Put the page pictures in the HTML file as ``data:`` URIs (one file to share, but a
            large one for a long document).
        dpi: Resolution of PDF page pictures.
        password: Password of an encrypted PDF source.
        progress: Called as ``progress(done, total)`` with ``done`` 0 once the index is read, then after
            each page is drawn (its picture rendered and encoded, or its text laid out): drawing is most
            of the time a long document's view takes.

    Returns:
        The path of the HTML file written.

    Raises:
        IndexFormatError: no valid page index at ``index``.
        DocumentLoadError: the source of a PDF or image index cannot be found or read, or it is not the
            document indexed (another page count, or not the indexed text in the nodes' boxes).
        InvalidOptionError: ``query`` has no searchable words, ``max_pages`` is below 1, ``dpi`` is
            outside 1-600, or ``output`` or ``source`` is not a usable path (a NUL, too long).
        OutputExistsError: ``output`` is a folder, a link, a FIFO or device, the source, inside the index,
            or a file that is not a view; its pictures folder is not one the view made; or the view cannot
            be written there. Nothing that was there is changed.
    """
    from ..document.store import load_index
    from ..retrieval.base import check_max_pages
    from .html import html_pieces
    from .pictures import find_source, source_beside, source_kind

    check_max_pages(max_pages)
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 1 <= dpi <= 600:
        raise InvalidOptionError(f"dpi must be a whole number from 1 to 600; got {dpi!r}.")
    if query is not None:
        from ..retrieval.base import require_query_words

        require_query_words(query)  # refused before anything is read or written
    for path in (output, source):
        if path is not None:
            check_path(path, error=InvalidOptionError)
    document = load_index(index)
    root = _index_root(Path(index))
    target = Path(output) if output is not None else default_view_path(index)
    kind = source_kind(document)
    source_path = None
    missing_source: str | None = None
    if kind in ("pdf", "image"):
        try:
            source_path = find_source(document, root, source)
        except DocumentLoadError as exc:
            # An index without positions of text (the vision strategy's) loses no boxes without its
            # source: its pages are shown as text with the pictures it saved. Other indexes need it.
            if source is not None or _has_text_boxes(document):
                raise
            missing_source = str(exc)
    check_output(target, index_root=root, source_path=source_path or source_beside(document, root))
    if progress is not None:
        progress(0, len(document.pages))

    # Staged beside the output, so publishing is a rename on one file system; see output.py.
    with staged_view(target) as staging:
        with _query_context(document, query, max_pages) as result:
            if source_path is not None and kind is not None:
                from .pictures import open_pictures

                with open_pictures(source_path, kind, dpi=dpi, password=password) as pictures:
                    _check_pages(document, pictures, source_path)
                    pages = _picture_pages(document, pictures, result, staging, embed_images, progress)
            else:
                pages = _text_pages(document, result, staging, embed_images, progress)
            # Inside the query's block: marking the snippets' words asks its retriever for their tokens.
            pieces = html_pieces(
                document,
                pages,
                result,
                source_name=source_path.name if source_path else None,
                missing_source=missing_source,
            )
        # Written piece by piece: the whole page is never one string in memory.
        staging.publish(pieces)
    return target


def _query_context(document: Document, query: str | None, max_pages: int) -> Any:
    import contextlib

    if query is None:
        return contextlib.nullcontext(None)
    from .matches import run_query

    return run_query(document, query, max_pages=max_pages)


def _check_pages(document: Document, pictures: Pictures, source_path: Path) -> None:
    expected = document.source_page_count
    last = max((page.index for page in document.pages), default=-1)
    if (expected is not None and expected != pictures.page_count) or last >= pictures.page_count:
        raise DocumentLoadError(
            f"{str(source_path)!r} has {pictures.page_count} page(s), but the index was built from a source "
            f"of {expected if expected is not None else last + 1}; give the indexed file with --source."
        )
    if pictures.text_words is not None and not _same_text(document, pictures.text_words):
        raise DocumentLoadError(
            f"{str(source_path)!r} has the page count of the indexed source, but not its text: it is another "
            "document; give the indexed file with --source."
        )


#: Nodes whose text the PDF text strategy takes from the page's text layer, where they are placed.
_LAYER_TYPES = frozenset({"heading", "paragraph", "list_item"})
_TOKEN = re.compile(r"[^\W_]{3,}")


def _same_text(
    document: Document, text_words: Callable[[int], list[tuple[float, float, float, float, str]]]
) -> bool:
    """Whether the source's text layer holds, in their boxes, the placed text nodes of a few pages (those
    the PDF text strategy read from it). Pages read by OCR or a model, and nodes without a position, are
    not compared: True if there are none."""
    wanted = 0
    found = 0
    sampled = 0
    for page in document.pages:
        if page.origin is not None and page.origin.source != "text_layer":
            continue  # read by OCR or a model: its text is not in the text layer
        placed = [
            (bbox, str(getattr(node, "content", "") or ""))
            for node in page.nodes
            if node.type in _LAYER_TYPES and (bbox := getattr(node, "bbox", None)) is not None
        ]
        if not placed:
            continue
        words = text_words(page.index)
        for (x0, y0, x1, y1), content in placed:
            inside = {
                token.casefold()
                for wx0, wy0, wx1, wy1, word in words
                if x0 - 1 <= (wx0 + wx1) / 2 <= x1 + 1 and y0 - 1 <= (wy0 + wy1) / 2 <= y1 + 1
                for token in _TOKEN.findall(word)
            }
            tokens = [token.casefold() for token in _TOKEN.findall(content)]
            wanted += len(tokens)
            found += sum(token in inside for token in tokens)
        sampled += 1
        if sampled == 3 or wanted >= 600:
            break
    return wanted < 20 or found >= wanted / 2


def _picture_pages(
    document: Document,
    pictures: Pictures,
    result: QueryResult | None,
    staging: Staging,
    embed_images: bool,
    progress: Callable[[int, int], None] | None,
) -> list[PageView]:
    pages = []
    for page in document.pages:
        matched = result is not None and page.index in result.page_indexes
        picture = pictures.render(page.index, matched)
        if embed_images:
            src = picture.data_uri()
        else:
            src = staging.add_picture(f"page-{page.index + 1:04d}.{picture.suffix}", picture.data)
        view = _page_view(page.index, page.nodes, picture.space, result)
        view.src, view.width_px, view.height_px = src, picture.width_px, picture.height_px
        if matched and result is not None:
            view.hits = _word_hits(picture, result)
        pages.append(view)
        if progress is not None:
            progress(len(pages), len(document.pages))
    return pages


def _word_hits(picture: PagePicture, result: QueryResult) -> list[tuple[float, float, float, float]]:
    hits = result.matching(word[4] for word in picture.words)
    boxes = []
    for x0, y0, x1, y1, text in picture.words:
        if text in hits:
            box = picture.space.percent((x0, y0, x1, y1))
            if box is not None:
                boxes.append(box)
    return boxes


def _page_view(
    index: int, nodes: list[Node], space: PageSpace | None, result: QueryResult | None
) -> PageView:
    matched = result is not None and index in result.page_indexes
    view_nodes = []
    for node in nodes:
        if node.type == "section":
            continue
        text = _node_text(node)
        bbox = getattr(node, "bbox", None)
        box = space.percent(bbox) if space is not None and bbox is not None else None
        marks = result.marks(text) if matched and result is not None else []
        view_nodes.append(ViewNode(node.id, node.type, _node_label(node), text, box, marks))
    view = PageView(index, None, 0, 0, view_nodes, space)
    if result is not None:
        for rank, match in enumerate(result.matches, start=1):
            if match.page_index == index:
                view.match_rank, view.match_score = rank, match.score
    return view


def _has_text_boxes(document: Document) -> bool:
    """Whether any text node (not a picture's or a table's crop) has a position on its page."""
    return any(
        getattr(node, "bbox", None) is not None and node.type not in ("image", "table")
        for _, node in document.iter_nodes()
    )


def _text_pages(
    document: Document,
    result: QueryResult | None,
    staging: Staging,
    embed_images: bool,
    progress: Callable[[int, int], None] | None,
) -> list[PageView]:
    """Pages shown as text blocks, with the pictures the index saved for its image and table nodes."""
    import base64

    from ..document.store import image_suffix

    pages = []
    for page in document.pages:
        view = _page_view(page.index, page.nodes, None, result)
        by_id = {node.id: node for node in page.nodes}
        for shown in view.nodes:
            data = getattr(by_id.get(shown.id), "image_data", None)
            if not data:
                continue
            suffix = image_suffix(data)
            if embed_images:
                mime = "image/jpeg" if suffix == ".jpg" else "image/png"
                shown.picture = f"data:{mime};base64," + base64.b64encode(data).decode("ascii")
            else:
                # Node ids are safe file names (the model checks them), and never the folder's mark.
                shown.picture = staging.add_picture(f"{shown.id}{suffix}", data)
        pages.append(view)
        if progress is not None:
            progress(len(pages), len(document.pages))
    return pages
