"""Human-readable views of a page index: a summary with counts, and the TOC as an indented tree.

Every piece of document text printed here goes through :func:`~.terminal.safe_text`, so a title holding
an escape sequence shows it escaped instead of obeying it.
"""

from __future__ import annotations

import os
import sys
from typing import IO, Any

from ..document.model import MAX_TOC_DEPTH, Document, TocEntry
from .terminal import safe_text

__all__ = ["inspect", "print_toc_tree", "toc_tree_lines"]


def toc_tree_lines(document: Document) -> list[str]:
    """The TOC as lines indented two spaces per level, each with its pages (1-based, as users count).

    An entry linked to a section that spans several pages shows the range (``pp. 3-5``), otherwise the
    target page (``p. 3``), and the printed page number when it was read from a printed TOC. Control
    characters in titles are shown escaped (see :func:`~.terminal.safe_text`). Entries nested deeper
    than ``MAX_TOC_DEPTH`` levels are indented as the deepest of those, with their level written out
    (``[p. 3; level 1,200]``).
    """
    children: dict[str | None, list[TocEntry]] = {}
    for entry in document.toc:
        children.setdefault(entry.parent_id, []).append(entry)
    known = {entry.id for entry in document.toc}
    spans = {section.id: (section.first_page, section.last_page) for section in document.sections()}
    lines: list[str] = []
    # Walked with a stack, not by recursion: a TOC can nest deeper than Python's recursion limit (a
    # document.json written by hand or by another tool; 1,200 levels raised RecursionError).
    stack = [(entry, 0) for entry in reversed(children.get(None, []))]
    while stack:
        entry, depth = stack.pop()
        span = spans.get(entry.target_section_id or "")
        if span is not None and span[0] != span[1]:
            where = f"pp. {span[0] + 1}-{span[1] + 1}"
        elif entry.target_page is not None:
            where = f"p. {entry.target_page + 1}"
        else:
            where = "p. ?"
        if entry.printed_page is not None:
            where += f" (printed {safe_text(entry.printed_page, newlines=False)})"
        if depth >= MAX_TOC_DEPTH:
            where += f"; level {depth + 1:,}"  # indented no deeper, so a long chain prints in linear space
        indent = "  " * min(depth, MAX_TOC_DEPTH - 1)
        lines.append(f"{indent}- {safe_text(entry.title, newlines=False)}  [{where}]")
        stack.extend((child, depth + 1) for child in reversed(children.get(entry.id, [])))
    # Entries whose parent is missing would be unreachable from the roots; show them rather than lose them.
    for entry in document.toc:
        if entry.parent_id is not None and entry.parent_id not in known:
            lines.append(f"- {safe_text(entry.title, newlines=False)}")
    return lines


_SOURCE_NAMES = {"text_layer": "text layer", "ocr": "OCR", "vision": "vision model", "parsed": "parsed"}


def _text_sources(document: Document) -> dict[str, int]:
    counts: dict[str, int] = {}
    for page in document.pages:
        key = page.origin.source if page.origin is not None else "unknown"
        counts[key] = counts.get(key, 0) + 1
    return counts


def _pages_from(document: Document, source: str) -> list[int]:
    return [
        page.index + 1 for page in document.pages if page.origin is not None and page.origin.source == source
    ]


def _ranges(numbers: list[int]) -> str:
    """``[1, 2, 3, 7]`` as ``"1-3, 7"``."""
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][1] + 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    return ", ".join(str(first) if first == last else f"{first}-{last}" for first, last in runs)


def _sources_line(document: Document) -> str:
    """Where the pages' text came from: ``"130 text layer, 6 OCR (tesseract (eng); pages 3-8)"``."""
    if not document.pages:
        return "(no pages)"
    pieces = []
    for source, count in sorted(_text_sources(document).items(), key=lambda item: -item[1]):
        piece = f"{count} {_SOURCE_NAMES.get(source, source)}"
        if source in ("ocr", "vision"):
            engines = sorted(
                {
                    page.origin.engine
                    for page in document.pages
                    if page.origin is not None
                    and page.origin.source == source
                    and page.origin.engine is not None
                }
            )
            where = _ranges(_pages_from(document, source))
            details = "; ".join(
                [
                    *(safe_text(engine, newlines=False) for engine in engines if engine is not None),
                    f"pages {where}",
                ]
            )
            piece += f" ({details})"
        pieces.append(piece)
    return ", ".join(pieces)


def print_toc_tree(document: Document, *, file: IO[str] | None = None) -> None:
    """Print the TOC tree of a document (or ``(no table of contents)``).

    Args:
        document: The page index.
        file: Where to print; standard output by default.
    """
    out = file if file is not None else sys.stdout
    lines = toc_tree_lines(document)
    print("\n".join(lines) if lines else "(no table of contents)", file=out)


def inspect(
    document_or_path: Document | str | os.PathLike[str], *, file: IO[str] | None = None, show_toc: bool = True
) -> dict[str, Any]:
    """Print a summary of a page index and return its figures.

    The document's own text (name, title, author, abstract, TOC) is printed with control characters
    escaped (see :func:`~.terminal.safe_text`); the returned figures hold it as it is.

    Args:
        document_or_path: A document, or the path of a saved ``.pageindex`` directory.
        file: Where to print; standard output by default.
        show_toc: Also print the TOC tree.

    Returns:
        ``name``, ``title``, ``pages``, ``source_pages``, ``nodes`` (total), ``node_counts`` (by type),
        ``toc_entries``, ``sections`` (with 1-based page ranges), ``has_abstract``, ``usage`` (model calls
        and tokens, or None), ``failed_pages`` (1-based) and ``text_sources`` (where the pages' text
        came from: ``{"text_layer": 130, "ocr": 6}``; ``"unknown"`` for pages of an older index that
        could not tell), with ``ocr_pages`` and ``vision_pages`` (1-based).

    Raises:
        IndexFormatError: the path is not a valid page index.
    """
    if isinstance(document_or_path, Document):
        document = document_or_path
    else:
        from ..document.store import load_index

        document = load_index(document_or_path)
    out = file if file is not None else sys.stdout
    counts = document.node_counts()
    sections = document.sections()
    stats: dict[str, Any] = {
        "name": document.name,
        "title": document.title,
        "pages": len(document.pages),
        "source_pages": document.source_page_count,
        "nodes": sum(counts.values()),
        "node_counts": dict(sorted(counts.items())),
        "toc_entries": len(document.toc),
        "sections": [
            {"title": s.title, "level": s.level, "first_page": s.first_page + 1, "last_page": s.last_page + 1}
            for s in sections
        ],
        "has_abstract": bool(document.abstract),
        "usage": document.usage.model_dump() if document.usage is not None else None,
        "failed_pages": [page.index + 1 for page in document.failed_pages],
        "refinement": [item.model_dump() for item in document.refinement],
        "text_sources": _text_sources(document),
        "ocr_pages": _pages_from(document, "ocr"),
        "vision_pages": _pages_from(document, "vision"),
    }
    name = document.name + (f".{document.extension}" if document.extension else "")
    print(f"Document: {safe_text(name, newlines=False)}", file=out)
    print(f"Title:    {safe_text(document.title, newlines=False) if document.title else '(none)'}", file=out)
    if document.author:
        print(f"Author:   {safe_text(document.author, newlines=False)}", file=out)
    pages_line = f"{stats['pages']}"
    if document.source_page_count is not None and document.source_page_count != stats["pages"]:
        pages_line += f" of {document.source_page_count} (selection)"
    print(f"Pages:    {pages_line}", file=out)
    count_text = ", ".join(f"{kind} {number}" for kind, number in stats["node_counts"].items()) or "none"
    print(f"Nodes:    {stats['nodes']} ({count_text})", file=out)
    print(f"Text:     {_sources_line(document)}", file=out)
    print(f"Sections: {len(sections)}", file=out)
    entries = stats["toc_entries"]
    print(f"TOC:      {entries} {'entry' if entries == 1 else 'entries'}", file=out)
    if document.usage is not None:
        usage = document.usage
        print(
            f"Model:    {usage.calls} call(s), {usage.input_tokens:,} input and "
            f"{usage.output_tokens:,} output tokens",
            file=out,
        )
    for item in document.refinement:
        if item.score_before is None:
            print(
                f"Refined:  page {item.index + 1} not reviewed ({safe_text(item.note, newlines=False)})",
                file=out,
            )
        else:
            print(
                f"Refined:  page {item.index + 1} scored {item.score_before:.2f} -> {item.score_after:.2f} "
                f"({item.reextractions} re-read(s))",
                file=out,
            )
    if document.failed_pages:
        listed = ", ".join(str(page.index + 1) for page in document.failed_pages)
        print(f"Failed:   page(s) {listed} could not be read by the model", file=out)
    if document.abstract:
        print(f"Abstract: {safe_text(document.abstract)}", file=out)
    if show_toc:
        print("", file=out)
        print("Table of contents", file=out)
        print_toc_tree(document, file=out)
    return stats
