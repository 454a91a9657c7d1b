"""Ablation of the text strategy's structure rules: each mechanism switched off alone, on every eval set.

Every row rebuilds the page indexes with one rule disabled (by replacing one function of the strategy in
this process only) and scores them with ``structure_eval`` (outline hidden, level 1-2 entries printed on
their pages): median and worst numbering-tolerant recovery, median headings per outline entry, median TOC
precision. A rule that helps one set and hurts the other shows here.

A data dir holds ``pdfs/*.pdf`` (or the PDFs themselves); PDFs without an outline are passed over.

``--markdown-reference DIR`` adds a set scored against another parser's section headers: ``DIR`` holds
``name.pdf`` with ``name.md`` beside it, and each ``#`` line of the Markdown counts as found when a heading
anywhere in the document matches it (numbering-tolerant, ratio >= 85; a section number the reference
wrote after the words is read before them); precision is the share of our headings that match a header.
docling's test PDFs with their ground truth (tests/data/pdf of docling-project/docling: papers, a
handbook, a Korean report, right-to-left forms, an IBM redbook) are such a set.

Usage: python benchmarks/structure_ablation.py [DATA_DIR ...] [--markdown-reference DIR] [--rows WORD ...]
(default data dirs: ../shared/eval/structure, financebench and mmlongbench)
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import os
import re
import statistics
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from structure_eval import Parsed, TocItem, evaluate, reference
from structure_eval import _matches as title_matches

from extract_thinker_pageindex import HeadingNode, build_index, tables
from extract_thinker_pageindex.strategies import pdf_contents, pdf_layout, pdf_structure, pdf_text
from extract_thinker_pageindex.tables import aligned

ROOT = Path(__file__).resolve().parents[1]


def _no_units(lines: list[Any]) -> list[Any]:
    return lines  # MuPDF's blocks as they come: no paragraph units inside them, none rejoined


def _weak_cues_off(original: Callable[..., Any]) -> Callable[..., Any]:
    def cue(line: Any, body: float) -> str | None:
        found = original(line, body)
        return found if found in ("size", "bold") else None

    return cue


def _strict_contents_off(page: Any, page_count: int | None = None) -> bool:
    # The old test: five entry lines and a third of the page, whatever the numbers say.
    entries = pdf_contents.contents_entries(page)
    return len(entries) >= 5 and len(entries) >= 0.3 * len(page.lines)


def _cue_off(
    original: Callable[..., Any], switched: Callable[[Any, float, str | None], bool]
) -> Callable[..., Any]:
    def cue(line: Any, body: float) -> str | None:
        found = original(line, body)
        return None if switched(line, body, found) else found

    return cue


def _weight_or_size_only(previous: Any, line: Any) -> bool:
    return abs(line.size - previous.size) >= 1 or line.bold != previous.bold


def _without_tex_bold(original: Callable[[str], tuple[bool, ...]]) -> Callable[[str], tuple[bool, ...]]:
    # The font-name test before Computer Modern's and EC's bold names (CMBX10, SFBX1000) were read as bold.
    before = re.compile(r"bold|black|heavy|semibold|demibold|[-.,](?:B|BI|Bd|BdIt)$|-Medi$", re.IGNORECASE)

    def style(font: str) -> tuple[bool, ...]:
        return (before.search(font) is not None, *original(font)[1:])

    return style


def _without_sc_suffix(original: Callable[[str], tuple[bool, ...]]) -> Callable[[str], tuple[bool, ...]]:
    # The small-capitals test before a weight run into "SC" ("Caecilia-RomanSC") counted.
    before = re.compile(r"smallcaps|^(?:[A-Z]{6}\+)?cmcsc|[-_.]sc$|[-_.]sc[0-9]", re.IGNORECASE)

    def style(font: str) -> tuple[bool, ...]:
        return (*original(font)[:3], before.search(font) is not None)

    return style


def _no_capital_openings(original: Callable[..., bool]) -> Callable[..., bool]:
    # A line opening with a lower-case letter is running text even when small capitals draw it a capital.
    def heading_like(line: Any, body: float, continuation: bool = False) -> bool:
        return original(dataclasses.replace(line, capital_opening=False), body, continuation)

    return heading_like


def _page_wide_only(original: Callable[..., bool]) -> Callable[..., bool]:
    # Running text after a title judged against the page's width, as before column pages counted.
    def introduces(page: Any, after: int, body: float, columns: Any = ()) -> bool:
        return original(page, after, body)

    return introduces


NEVER = re.compile(r"(?!)")

ABLATIONS: dict[str, list[tuple[Any, str, Any]]] = {
    "all rules": [],
    "no paragraph units": [(pdf_layout, "_split_units", _no_units)],
    "no column-aware table rows": [(pdf_structure, "_other_column", lambda *args: False)],
    "no underline/capitals/numbering cues": [
        (pdf_structure, "heading_cue", _weak_cues_off(pdf_structure.heading_cue))
    ],
    "no underline detection": [(pdf_layout, "_mark_underlines", lambda *args: None)],
    "no numbered series nesting": [(pdf_structure, "_nest_numbered_members", lambda *args: None)],
    "no italic cue": [
        (
            pdf_structure,
            "heading_cue",
            _cue_off(pdf_structure.heading_cue, lambda _l, _b, cue: cue == "italic"),
        )
    ],
    "no another-font cue": [
        (pdf_structure, "heading_cue", _cue_off(pdf_structure.heading_cue, lambda _l, _b, cue: cue == "font"))
    ],
    "no small-capitals cue": [
        (
            pdf_structure,
            "heading_cue",
            _cue_off(
                pdf_structure.heading_cue,
                lambda line, body, cue: cue == "caps" and (line.size < body * 0.85 or not line.caps),
            ),
        )
    ],
    "no weak title at the head of its unit": [(pdf_structure, "_heads_its_unit", lambda *args: False)],
    "no unit split at a change of slant": [(pdf_layout, "_restyled", _weight_or_size_only)],
    "no length limit on weak titles": [(pdf_structure, "WEAK_TITLE_WORDS", 10_000)],
    "no caption guard": [(pdf_structure, "_CAPTION", NEVER)],
    "no code-character guard": [(pdf_structure, "_CODE", NEVER)],
    "no paged running titles": [(pdf_structure, "_PAGED_TITLE", NEVER)],
    "no text-on-end exemption": [(pdf_structure, "ON_END", float("inf"))],
    "no column pages": [(pdf_structure, "_column_page", lambda *args: [])],
    "no hanging numbered titles": [(pdf_structure, "_hangs_under", lambda *args: False)],
    "no label line over its title": [(pdf_structure, "_LABEL_LINE", NEVER)],
    "no titles run into their text": [(pdf_structure, "_run_in_headings", lambda *args: {})],
    "no numbered bold titles run into their text": [(pdf_structure, "_numbered_run_in", lambda *args: {})],
    "no column-wide running text": [
        (pdf_structure, "_introduces_text", _page_wide_only(pdf_structure._introduces_text))
    ],
    "no TeX bold font names": [(pdf_layout, "_font_style", _without_tex_bold(pdf_layout._font_style))],
    "no small-capitals names run into SC": [
        (pdf_layout, "_font_style", _without_sc_suffix(pdf_layout._font_style))
    ],
    "no letter-spaced titles joined": [(pdf_text, "letters_joined", lambda title: title)],
    "no turned pages read as shown": [(pdf_layout, "reading_matrix", lambda *args, **kwargs: None)],
    "no columns tiling the type area": [(pdf_structure, "_tiled_columns", lambda page: [])],
    "no stray table rows left out": [(aligned, "_without_strays", lambda region, columns: region)],
    "no index pages without tables": [(tables, "index_page", lambda rows: False)],
    "no numbered title over its subsection": [(pdf_structure, "_opens_subsection", lambda *args: False)],
    "no numbered titles told apart": [(pdf_structure, "_numbered_under", lambda *args: False)],
    "no letter share measured after the number": [(pdf_structure, "_title_words", lambda text: text)],
    "no contents-entry guard": [(pdf_structure, "leaders_to_page", lambda text: False)],
    "no small-capital openings": [
        (pdf_structure, "_heading_like", _no_capital_openings(pdf_structure._heading_like))
    ],
    "no index letters": [(pdf_structure, "_INDEX_LETTER", NEVER)],
    "no titles ending in a colon": [(pdf_structure, "_colon_title", lambda *args: False)],
    "contents test without page-number checks": [
        (pdf_contents, "is_toc_page", _strict_contents_off),
        (pdf_structure, "is_toc_page", _strict_contents_off),
    ],
}


@contextlib.contextmanager
def patched(replacements: list[tuple[Any, str, Any]]) -> Iterator[None]:
    saved = [(module, name, getattr(module, name)) for module, name, _ in replacements]
    try:
        for module, name, value in replacements:
            setattr(module, name, value)
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


def parse(path: Path) -> Parsed:
    document = build_index(path, use_outline=False, images=False, strategy="text")
    headings: dict[int, list[tuple[int, str]]] = {}
    for page, node in document.iter_nodes():
        if isinstance(node, HeadingNode):
            headings.setdefault(page.index, []).append((int(node.level[1:]), node.content))
    toc = None
    if document.toc:
        position = {entry.id: number for number, entry in enumerate(document.toc)}
        toc = [TocItem(e.title, e.target_page, position.get(e.parent_id or "")) for e in document.toc]
    return Parsed(headings, toc)


# A header whose section number the reference wrote after its words ("들어가며 1": docling's reading order of
# a number set in a badge beside the title): the number is moved to the front, as the page shows it.
_TRAILING_NUMBER = re.compile(r"^(\D.*?)\s+([0-9]{1,2})$")


def markdown_recall(pairs: list[tuple[Path, list[str]]]) -> tuple[int, int, int, int]:
    """(headers found, headers, headings detected, headings matching a header) over PDF + reference-header
    pairs: recall is found / headers, precision matching / detected."""
    found = total = detected = matching = 0
    for path, headers in pairs:
        headers = [_TRAILING_NUMBER.sub(r"\2 \1", header) for header in headers]
        texts = [text for items in parse(path).headings.values() for _level, text in items]
        detected += len(texts)
        total += len(headers)
        found += sum(1 for header in headers if any(title_matches(header, text, True) for text in texts))
        matching += sum(1 for text in texts if any(title_matches(header, text, True) for header in headers))
    return found, total, detected, matching


def median(values: list[float | None]) -> float:
    present = [value for value in values if value is not None]
    return statistics.median(present) if present else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dirs", nargs="*", type=Path)
    parser.add_argument("--markdown-reference", type=Path, default=None)
    parser.add_argument(
        "--rows", nargs="*", default=None, help="run only the ablations whose label holds one of these words"
    )
    args = parser.parse_args()
    pairs: list[tuple[Path, list[str]]] = []
    if args.markdown_reference is not None:
        for markdown in sorted(args.markdown_reference.glob("*.md")):
            if markdown.with_suffix(".pdf").is_file():
                lines = markdown.read_text(encoding="utf-8").splitlines()
                headers = [line.lstrip("#").strip() for line in lines if line.startswith("#")]
                pairs.append((markdown.with_suffix(".pdf"), headers))
    dirs = args.data_dirs or [
        ROOT.parent / f"shared/eval/{name}" for name in ("structure", "financebench", "mmlongbench")
    ]
    logging.getLogger("extract_thinker_pageindex").setLevel(logging.ERROR)
    warnings.simplefilter("ignore")
    sets = {
        directory.name: [
            path
            for path in sorted(
                (directory / "pdfs" if (directory / "pdfs").is_dir() else directory).glob("*.pdf")
            )
            if reference(path)[1]
        ]
        for directory in dirs
    }
    header = f"{'ablation':42}" + "".join(
        f"{name[:12] + ' tol':>18}{'worst':>7}{'h/entry':>9}{'toc':>6}" for name in sets
    )
    if pairs:
        header += f"{'reference headers found':>26}{'headings':>10}{'precision':>11}"
    print(header)
    for label, replacements in ABLATIONS.items():
        if args.rows is not None and label != "all rules" and not any(word in label for word in args.rows):
            continue
        row = f"{label:42}"
        with patched(replacements):
            for paths in sets.values():
                scores = [evaluate(path.stem, path, parse(path)) for path in paths]
                tolerant = [score.tolerant_recall for score in scores]
                row += f"{median(tolerant):18.2f}{min(t for t in tolerant if t is not None):7.2f}"
                row += f"{median([s.per_entry for s in scores]):9.2f}"
                row += f"{median([s.toc_precision for s in scores]):6.2f}"
            if pairs:
                found, total, detected, matching = markdown_recall(pairs)
                row += f"{f'{found} / {total}':>26}{detected:>10}{matching / max(detected, 1):11.2f}"
        print(row, flush=True)


if __name__ == "__main__":
    main()
