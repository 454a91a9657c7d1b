"""Regenerate examples/data/service-agreement.pdf from service-agreement.md with PyMuPDF.

The PDF is committed; this script records how it was made. It lays the Markdown out as HTML with
PyMuPDF's Story API (each part on a new page, headings in larger bold type, the fee table as a table) and
adds an outline (bookmarks) for the headings. Run: python examples/data/make_sample_pdf.py
"""

from __future__ import annotations

import html
import itertools
import re
from pathlib import Path

import pymupdf
from markdown_it import MarkdownIt

HERE = Path(__file__).resolve().parent
CSS = """
body { font-family: serif; font-size: 11pt; }
h1 { font-size: 18pt; font-weight: bold; margin-top: 0; }
h2 { font-size: 14pt; font-weight: bold; }
h3 { font-size: 12pt; font-weight: bold; font-style: italic; }
table { border-collapse: collapse; }
td, th { border: 1px solid black; padding: 3px; }
pre { font-family: monospace; font-size: 9pt; }
"""


def main() -> None:
    text = (HERE / "service-agreement.md").read_text(encoding="utf-8")
    body = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.DOTALL)
    renderer = MarkdownIt("commonmark").enable("table")
    # Split before each top-level heading, found by the parser: a '# ' line in a code fence is no heading.
    lines = body.split("\n")
    tokens = renderer.parse(body)
    starts = [
        token.map[0] for token in tokens if token.type == "heading_open" and token.tag == "h1" and token.map
    ]
    bounds = [0, *starts, len(lines)]
    parts = ["\n".join(lines[a:b]) for a, b in itertools.pairwise(bounds)]
    writer = pymupdf.DocumentWriter(str(HERE / "service-agreement.pdf"))
    page_rect = pymupdf.paper_rect("letter")
    where = pymupdf.Rect(72, 72, page_rect.width - 72, page_rect.height - 72)
    for part in parts:
        if not part.strip():
            continue
        story = pymupdf.Story(html=renderer.render(part), user_css=CSS)
        more = True
        while more:
            device = writer.begin_page(page_rect)
            more, _ = story.place(where)
            story.draw(device)
            writer.end_page()
    writer.close()

    document = pymupdf.open(HERE / "service-agreement.pdf")
    toc = []
    for index, page in enumerate(document):
        flags = pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_LIGATURES
        for block in page.get_text("dict", flags=flags)["blocks"]:
            for line in block.get("lines", []):
                spans = line["spans"]
                size = max(span["size"] for span in spans)
                title = html.unescape("".join(span["text"] for span in spans).strip())
                level = {18: 1, 14: 2, 12: 3}.get(round(size))
                bold = all(span["flags"] & 16 and not span["flags"] & 8 for span in spans)
                if level and bold and title:
                    toc.append([level, title, index + 1])
    document.set_toc(toc)
    document.set_metadata({"title": "Master Services Agreement", "author": "Northwind Legal"})
    document.subset_fonts()
    document.ez_save(HERE / "service-agreement.tmp.pdf")
    document.close()
    (HERE / "service-agreement.tmp.pdf").replace(HERE / "service-agreement.pdf")
    document = pymupdf.open(HERE / "service-agreement.pdf")
    print(f"wrote {document.name}: {document.page_count} pages, {len(toc)} outline entries")


if __name__ == "__main__":
    main()
