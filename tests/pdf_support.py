"""Test support for PDFs: PDFs written by hand, byte by byte, for page trees that PyMuPDF refuses to
write; sample prose and columns; a page given other coordinates than its media box."""

from __future__ import annotations

from typing import Any


def raw_pdf(objects: list[str]) -> bytes:
    """A PDF of the given objects (numbered from 1, object 1 the catalog) with a correct xref table."""
    out = b"%PDF-1.7\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


CATALOG = "<< /Type /Catalog /Pages 2 0 R >>"
LEAF = "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"


SENTENCES = [
    "The company sells cloud software to small and medium businesses in Europe and North America.",
    "Revenue grew in every quarter of the year as customers moved more of their work online.",
    "Most contracts renew each year and are billed monthly in advance.",
    "The board approved a plan to expand the sales team in the coming year.",
    "Costs rose more slowly than revenue because the data centres were used more efficiently.",
    "Management expects demand to stay strong although competition is increasing.",
    "The notes to the financial statements describe the accounting policies in detail.",
    "Cash from operations was used to repay debt and to buy new servers.",
]


def prose(start: int, count: int) -> str:
    """``count`` sentences of plain running text, starting at sentence ``start``."""
    return " ".join(SENTENCES[(start + i) % len(SENTENCES)] for i in range(count))


#: The two columns of the two-column test pages (reading order: left, then right).
LEFT_COLUMN = (
    "Northern offices opened two new branches this spring and hired local staff for both of them. "
    "Sales in the north grew steadily while travel costs fell."
)
RIGHT_COLUMN = (
    "Southern offices launched three products and trained their partners to sell them. "
    "Hiring in the south slowed after the summer as planned."
)


def shift_page(page: Any, change: str) -> None:
    """Give a page other coordinates than its media box's: a crop box (``"crop"``) or a quarter turn
    (``"rotate"``). Node boxes stay in the page's own coordinates either way."""
    import pymupdf

    if change == "crop":
        page.set_cropbox(pymupdf.Rect(40, 60, 560, 700))
    else:
        page.set_rotation(90)
