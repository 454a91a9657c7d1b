"""Scanned PDFs for the OCR tests: a born-digital page drawn to an image and put back as a page with no
text layer, so OCR has real pixels to read (Tesseract through PyMuPDF, as installed by the [ocr] extra)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf


@dataclass
class Line:
    """A line of text drawn on the born-digital page: where, how large, what."""

    text: str
    y: float
    size: float = 11.0
    x: float = 72.0


@dataclass
class Table:
    """A ruled table: the x of each column rule, the y of each row rule, and the cells' text by row."""

    columns: Sequence[float]
    rows: Sequence[float]
    cells: Sequence[Sequence[str]]
    rule_width: float = 1.0

    @property
    def rect(self) -> pymupdf.Rect:
        return pymupdf.Rect(self.columns[0], self.rows[0], self.columns[-1], self.rows[-1])


@dataclass
class PageSpec:
    lines: Sequence[Line] = ()
    kind: str = "scan"  # "scan", "text" (born-digital), "blank", "photo", "stray" (a scan with a stamp)
    extra: list[str] = field(default_factory=list)
    tables: Sequence[Table] = ()


#: A page with a heading, a line of text, a ruled table of 3 columns and 4 rows, and a line after it.
RESULTS = Table(
    columns=(72, 252, 402, 540),
    rows=(150, 175, 200, 225, 250),
    cells=(
        ("Region", "Revenue", "Costs"),
        ("Europe", "1,234", "567"),
        ("Americas", "2,345", "1,024"),
        ("Asia", "987", "432"),
    ),
)
RESULTS_PAGE = PageSpec(
    [
        Line("Quarterly Results", 90, size=20),
        Line("The table below shows revenue and costs by region for the quarter.", 120),
        Line("Costs fell in every region while revenue grew in Europe and Asia.", 290),
    ],
    tables=[RESULTS],
)


def draw(page: pymupdf.Page, lines: Sequence[Line], tables: Sequence[Table] = ()) -> None:
    for line in lines:
        page.insert_text((line.x, line.y), line.text, fontsize=line.size, fontname="helv")
    for table in tables:
        for y in table.rows:
            page.draw_line((table.columns[0], y), (table.columns[-1], y), width=table.rule_width)
        for x in table.columns:
            page.draw_line((x, table.rows[0]), (x, table.rows[-1]), width=table.rule_width)
        for row, cells in enumerate(table.cells):
            for column, text in enumerate(cells):
                baseline = table.rows[row] + (table.rows[row + 1] - table.rows[row]) * 0.7
                page.insert_text((table.columns[column] + 6, baseline), text, fontsize=11, fontname="helv")


def born_digital(specs: Sequence[PageSpec]) -> pymupdf.Document:
    document = pymupdf.open()
    for spec in specs:
        page = document.new_page(width=612, height=792)
        draw(page, spec.lines, spec.tables)
    return document


def make_scan(path: Path, specs: Sequence[PageSpec], *, dpi: int = 150) -> Path:
    """Write a PDF whose pages are, by kind: a scan of the lines (a page-size picture, no text), the lines
    as a text layer, a blank page, a photograph-like picture without text, or a scan with a few stray
    glyphs of text layer over it (a Bates number)."""
    original = born_digital(specs)
    out = pymupdf.open()
    for spec, source in zip(specs, original, strict=True):
        page = out.new_page(width=source.rect.width, height=source.rect.height)
        if spec.kind == "text":
            draw(page, spec.lines, spec.tables)
        elif spec.kind in ("scan", "stray"):
            pixmap = source.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
            page.insert_image(page.rect, stream=pixmap.tobytes("png"))
            if spec.kind == "stray":
                page.insert_text((500, 780), "ABC000123", fontsize=7)
        elif spec.kind == "photo":
            pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 300, 200), False)
            pixmap.set_rect(pixmap.irect, (40, 90, 160))
            pixmap.set_rect(pymupdf.IRect(60, 50, 240, 150), (220, 180, 30))
            page.insert_image(pymupdf.Rect(72, 72, 540, 400), pixmap=pixmap)
        # "blank": nothing drawn
    out.save(path)
    return path


def original_boxes(specs: Sequence[PageSpec], page_index: int, text: str) -> list[pymupdf.Rect]:
    """Where ``text`` is on the born-digital page the scan was made from."""
    return born_digital(specs)[page_index].search_for(text)


def ocr_worker_children() -> list[int]:
    """Pids of OCR worker processes that are children of this process (from /proc)."""
    import os

    mine = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        parent = stat.rsplit(")", 1)[1].split()[1]
        if parent == mine and b"extract_thinker_pageindex.ocr.worker" in cmdline:
            found.append(int(entry.name))
    return found
