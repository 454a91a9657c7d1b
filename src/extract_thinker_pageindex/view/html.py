"""The view's HTML: one file with its CSS and script inline, the document's text escaped.

Document text is untrusted (a PDF can hold ``<script>``): what is written into the markup goes through
``html.escape``, and the nodes' data is embedded as JSON with ``<``, ``>`` and ``&`` escaped, so no text can
close the script element that holds it. The script only ever sets text (``textContent``), never markup.
A Content-Security-Policy forbids every network request: the page loads nothing but its own pictures.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from html import escape, unescape
from importlib import resources
from typing import TYPE_CHECKING, Any

from .output import VIEW_HEAD

if TYPE_CHECKING:
    from ..document.model import Document, TocEntry
    from .matches import QueryResult
    from .pages import PageView

__all__ = ["NODE_TYPES", "html_pieces", "json_for_script", "marked_html"]

#: The node types the view draws, in legend order.
NODE_TYPES = ("heading", "paragraph", "list_item", "table", "image", "header", "footer", "metadata")

_CSP = "default-src 'none'; img-src data: file: 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"
_SNIPPET_MARK = re.compile(r"\[([^\[\]]+)\]")


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


#: Compact JSON, as ``json.dumps(data, ensure_ascii=False, separators=(",", ":"))`` writes it (made once:
#: the view encodes every node on its own).
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def json_for_script(data: Any) -> str:
    """``data`` as JSON that can stand inside a ``<script>`` element: ``<``, ``>`` and ``&`` escaped."""
    text = _JSON.encode(data)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def marked_html(text: str, marks: list[tuple[int, int]]) -> str:
    """``text`` escaped, with the ``(start, end)`` ranges in ``<mark>``."""
    parts: list[str] = []
    done = 0
    for start, end in marks:
        parts.append(escape(text[done:start]))
        parts.append(f"<mark>{escape(text[start:end])}</mark>")
        done = end
    parts.append(escape(text[done:]))
    return "".join(parts)


def _box_attr(box: tuple[float, float, float, float] | None) -> str:
    return "" if box is None else ",".join(f"{value:g}" for value in box)


#: TOC entries deeper than this are shown at this depth (a deep or looping tree stays readable).
_TOC_DEPTH = 12


def _toc_order(document: Document) -> list[tuple[TocEntry, int]]:
    """The TOC entries in tree order with their depths (capped): every entry once; one whose ``parent_id``
    names no entry starts a tree of its own. Iterative, so no tree is too deep to show."""
    children: dict[str | None, list[TocEntry]] = {}
    known = {entry.id for entry in document.toc}
    for entry in document.toc:
        parent = entry.parent_id if entry.parent_id in known and entry.parent_id != entry.id else None
        children.setdefault(parent, []).append(entry)
    order: list[tuple[TocEntry, int]] = []
    seen: set[int] = set()
    roots = children.get(None, []) + list(document.toc)  # any entry not reached (a loop) as a root
    for root in roots:
        stack = [(root, 0)]
        while stack:
            entry, depth = stack.pop()
            if id(entry) in seen:
                continue
            seen.add(id(entry))
            order.append((entry, min(depth, _TOC_DEPTH)))
            stack.extend((child, depth + 1) for child in reversed(children.get(entry.id, [])))
    return order


def _toc_pieces(document: Document, pages: dict[int, PageView]) -> Iterator[str]:
    def entry_html(entry: TocEntry) -> str:
        title = escape(entry.title or "(untitled)")
        page = pages.get(entry.target_page) if entry.target_page is not None else None
        if page is None:
            return f'<span class="toc-missing" title="page not in the index">{title}</span>'
        box = None
        if entry.bbox is not None and page.space is not None:
            box = page.space.percent(entry.bbox)
        number = page.index + 1
        box_attr = f' data-box="{_box_attr(box)}"' if box is not None else ""
        return (
            f'<a class="toc-link" href="#page-{number}" data-goto="{number}"{box_attr}>{title}</a>'
            f'<span class="toc-page">{number}</span>'
        )

    order = _toc_order(document)
    if not order:
        yield '<p class="empty">This index has no table of contents.</p>'
        return
    depth = -1
    for entry, level in order:
        if level > depth:
            yield "<ul><li>" * (level - depth)
        else:
            yield "</li></ul>" * (depth - level) + "</li><li>"
        yield entry_html(entry)
        depth = level
    yield "</li></ul>" * (depth + 1)


def _matches_html(result: QueryResult, pages: dict[int, PageView]) -> str:
    head = f'<h2>Matches for <q class="query">{escape(result.query)}</q></h2>'
    if not result.matches:
        return f'<section id="matches">{head}<p class="empty">No page matched the query.</p></section>'
    items = []
    for rank, match in enumerate(result.matches, start=1):
        number = match.page_index + 1
        snippet = _SNIPPET_MARK.sub(lambda found: _snippet_mark(found, result), escape(match.snippet))
        link = (
            f'<a href="#page-{number}" data-goto="{number}">page {number}</a>'
            if match.page_index in pages
            else f"<span>page {number} (not in the index)</span>"
        )
        items.append(
            f'<li class="match" data-rank="{rank}">{link} <span class="score">score {match.score:.3f}</span>'
            f'<div class="snippet">{snippet}</div></li>'
        )
    return f'<section id="matches">{head}<ol>{"".join(items)}</ol></section>'


def _snippet_mark(found: re.Match[str], result: QueryResult) -> str:
    """A ``[word]`` of a snippet as a ``<mark>`` if it holds a query word (the retriever's brackets), else
    as it stands (brackets of the document's own text, such as a note's ``[1]``)."""
    return f"<mark>{found[1]}</mark>" if result.marks(unescape(found[1])) else found[0]


def _legend_html(pages: list[PageView], *, toc_boxes: bool) -> str:
    counts: dict[str, int] = {}
    for page in pages:
        for node in page.nodes:
            counts[node.type] = counts.get(node.type, 0) + 1
    items = []
    for kind in NODE_TYPES:
        if kind in counts:
            items.append(
                f'<li><label><input type="checkbox" checked data-type="{kind}">'
                f'<span class="swatch t-{kind}"></span>{kind.replace("_", " ")}'
                f' <span class="count">{counts[kind]}</span></label></li>'
            )
    if toc_boxes:
        items.append('<li><span class="swatch target"></span>TOC target</li>')
    if any(page.hits for page in pages):
        items.append('<li><span class="swatch hit"></span>query word</li>')
    return f'<section id="legend"><h2>Node types</h2><ul>{"".join(items)}</ul></section>'


def _page_pieces(k: int, page: PageView) -> Iterator[str]:
    """A page's markup: its head, then a piece per node (a picture's ``data:`` URI a piece of its own)."""
    number = page.index + 1
    classes = "page matched" if page.match_rank is not None else "page"
    badge = ""
    if page.match_rank is not None:
        badge = f' <span class="badge">match {page.match_rank} · score {page.match_score:.3f}</span>'
    yield (
        f'<section class="{classes}" id="page-{number}" data-k="{k}" data-page="{number}">'
        f'<h2 class="page-head">Page {number}{badge}</h2>'
    )
    if page.src is not None:
        yield f'<div class="sheet picture" style="aspect-ratio:{page.width_px}/{page.height_px}"><img src="'
        yield escape(page.src)
        yield (
            f'" width="{page.width_px}" height="{page.height_px}" '
            f'loading="lazy" decoding="async" alt="Page {number}"></div>'
        )
    else:
        yield '<div class="sheet text">'
        for j, node in enumerate(page.nodes):
            label = node.type.replace("_", " ") + (f" {escape(node.label)}" if node.label else "")
            yield (
                f'<div class="block t-{node.type}" data-j="{j}"><span class="tag">{label}</span>'
                f'<div class="text">{marked_html(node.text, node.marks)}</div>'
            )
            if node.picture is not None:
                yield '<img class="crop" src="'
                yield escape(node.picture)
                yield f'" loading="lazy" alt="{label}">'
            yield "</div>"
        if not page.nodes:
            yield '<p class="empty">No text on this page.</p>'
        yield "</div>"
    yield "</section>"


def _data_pieces(pages: list[PageView]) -> Iterator[str]:
    """The nodes' data for the page's script, node by node: the very text that
    ``json_for_script({"pages": [...]})`` of every page's data would give, never built whole."""
    yield '{"pages":['
    for k, page in enumerate(pages):
        yield f'{"," if k else ""}{{"n":{json_for_script(page.index + 1)},"nodes":['
        for j, node in enumerate(page.nodes):
            yield ("," if j else "") + json_for_script(node.data())
        yield "]"
        if page.hits:
            yield ',"h":' + json_for_script([list(hit) for hit in page.hits])
        yield "}"
    yield "]}"


#: Small pieces of the view are joined into text of about this many characters before they are written.
_CHUNK = 1 << 16


def _chunked(pieces: Iterable[str]) -> Iterator[str]:
    """``pieces`` joined into text of about :data:`_CHUNK` characters; a piece as long as that (a picture's
    URI, the script) is passed on as it is, never copied."""
    buffer: list[str] = []
    size = 0
    for piece in pieces:
        if len(piece) >= _CHUNK:
            if buffer:
                yield "".join(buffer)
                buffer, size = [], 0
            yield piece
            continue
        buffer.append(piece)
        size += len(piece)
        if size >= _CHUNK:
            yield "".join(buffer)
            buffer, size = [], 0
    if buffer:
        yield "".join(buffer)


def html_pieces(
    document: Document,
    pages: list[PageView],
    result: QueryResult | None,
    *,
    source_name: str | None,
    missing_source: str | None = None,
) -> Iterator[str]:
    """The whole view as HTML text in pieces, to be written one after the other: page by page, and the
    nodes' data node by node, so that the whole view's text need never be held at once.

    The query's part is made at once (marking its snippets asks the query's retriever); the rest as the
    pieces are taken, so ``document`` and ``pages`` must not change until they all are.

    Args:
        document: The page index.
        pages: Its pages as the view shows them, in order.
        result: The query's matches, if a query was given.
        source_name: The file the pictures were drawn from, if any.
        missing_source: Why the source could not be drawn from (pages then shown as text), if so.

    Returns:
        The pieces, in order; joined, they are the view's file (written as UTF-8).
    """
    by_index = {page.index: page for page in pages}
    matches = _matches_html(result, by_index) if result is not None else ""
    return _chunked(_view_pieces(document, pages, by_index, matches, source_name, missing_source))


def _view_pieces(
    document: Document,
    pages: list[PageView],
    by_index: dict[int, PageView],
    matches: str,
    source_name: str | None,
    missing_source: str | None,
) -> Iterator[str]:
    title = document.title or document.name
    counts = document.node_counts()
    facts = [f"{len(pages)} page(s)", f"{sum(counts.values())} nodes", f"{len(document.toc)} TOC entries"]
    if source_name is not None:
        facts.insert(0, source_name)
    elif document.extension:
        facts.insert(0, f"{document.name}.{document.extension} (shown as text)")
    yield (
        f"{VIEW_HEAD}"
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} — page index</title>"
    )
    yield f"<style>{_asset('view.css')}</style></head>\n"
    yield (
        f'<body><aside id="side"><header><h1>{escape(title)}</h1>'
        f'<p class="meta">{escape(" · ".join(facts))}</p></header>'
    )
    if missing_source:
        yield f'<p class="missing">Pages shown as text: {escape(missing_source)}</p>'
    yield matches
    yield _legend_html(pages, toc_boxes=any(entry.bbox is not None for entry in document.toc))
    yield '<nav id="toc"><h2>Contents</h2>'
    yield from _toc_pieces(document, by_index)
    yield "</nav></aside>\n"
    yield '<main id="pages">'
    for k, page in enumerate(pages):
        yield from _page_pieces(k, page)
    yield "</main>\n"
    yield (
        '<div id="details" hidden><button type="button" class="close" aria-label="close">×</button>'
        '<p class="kind"></p><div class="text"></div></div>\n'
    )
    yield '<script type="application/json" id="pageindex-data">'
    yield from _data_pieces(pages)
    yield "</script>\n"
    yield f"<script>{_asset('view.js')}</script>\n"
    yield "</body></html>\n"
