"""The vision strategy checked on what is really on the page: the local server's model reads each page
image it is sent (tests/vision_reader.py) and answers nodes with real boxes, in the coordinates each model
family answers in, so a box or a crop that lands off what is there fails."""

from __future__ import annotations

import io
from pathlib import Path

import pymupdf
import pytest
from PIL import Image

from extract_thinker_pageindex import HeadingNode, TableNode, build_index
from extract_thinker_pageindex.llm.client import ModelClient
from scan_support import RESULTS, RESULTS_PAGE, born_digital
from vision_reader import VisionReader, read_image

PAGE = [RESULTS_PAGE]


@pytest.fixture(scope="module")
def results_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("reader") / "results.pdf"
    born_digital(PAGE).save(path)
    return path


def plain(text: str) -> str:
    """Lower-case words of letters and digits only: OCR's stray quotes and commas left out."""
    return " ".join(
        filter(None, ("".join(char for char in word if char.isalnum()) for word in text.lower().split()))
    )


def centre(rect: tuple[float, float, float, float] | pymupdf.Rect) -> tuple[float, float]:
    x0, y0, x1, y1 = rect
    return (x0 + x1) / 2, (y0 + y1) / 2


def assert_lands_on(box: tuple[int, int, int, int] | None, truth: pymupdf.Rect) -> None:
    """A node's box (padded by the strategy on every side) holds what is drawn and is centred on it, within
    2 pt."""
    assert box is not None
    (x, y), (true_x, true_y) = centre(box), centre(truth)
    assert abs(x - true_x) <= 2 and abs(y - true_y) <= 2, (box, truth)
    assert pymupdf.Rect(box).contains(truth), (box, truth)


@pytest.mark.parametrize(
    ("model", "frame"),
    [
        ("openai/test-vision", "asked"),  # pixels of the image, as the request states its size
        ("openai/gpt-4o", "asked"),  # the page sent smaller (shorter side 768): pixels of that image
        ("openai/qwen2.5-vl-7b-instruct", "qwen2.5"),  # pixels of its own resized input
        ("openai/qwen3-vl-8b-instruct", "normalized"),  # thousandths
        ("openai/glm-4.5v", "normalized"),
    ],
)
def test_nodes_and_crops_land_on_what_the_page_shows(
    results_pdf: Path, llm_server, model: str, frame: str
) -> None:
    reader = VisionReader(frame=frame)
    llm_server.default = reader
    document = build_index(
        results_pdf, strategy="vision", model=ModelClient(model, sleep=lambda _: None), abstract=False
    )
    nodes = document.pages[0].nodes
    (heading,) = [node for node in nodes if isinstance(node, HeadingNode)]
    # What the reader's OCR reads, up to stray marks (a page sent to gpt-4o is drawn at about 94 dpi).
    assert plain(heading.content) == "quarterly results"
    assert [plain(node.content) for node in nodes if node.type == "paragraph"] == [
        "the table below shows revenue and costs by region for the quarter",
        "costs fell in every region while revenue grew in europe and asia",
    ]
    (table,) = [node for node in nodes if isinstance(node, TableNode)]
    assert_lands_on(table.bbox, RESULTS.rect)
    assert "americas 2345 1024" in plain(table.content or "")
    # The crop the strategy cut from the page is the table, whole: read again, it has every cell and rule.
    assert table.image_data is not None
    cropped = read_image(table.image_data)
    assert cropped.table is not None
    assert [[plain(cell) for cell in row] for row in cropped.table[1]] == [
        [plain(cell) for cell in row] for row in RESULTS.cells
    ]
    assert not any("Quarterly" in text or "Costs fell" in text for _, text in cropped.lines)


def test_qwen25_gets_a_page_its_processor_leaves_as_it_is(results_pdf: Path, llm_server) -> None:
    # Qwen2.5-VL answers in pixels of its resized input: the page is sent already at that size (sides
    # multiples of 28, within 1,280 patches), so those pixels are the image's own.
    llm_server.default = VisionReader(frame="qwen2.5")
    build_index(results_pdf, strategy="vision", model=ModelClient("openai/qwen2.5-vl-72b"), abstract=False)
    (url,) = llm_server.image_urls(0)
    import base64

    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as image:
        width, height = image.size
    assert width % 28 == 0 and height % 28 == 0
    assert width * height <= 1280 * 28 * 28
    assert (width, height) == (868, 1148)  # 880 x 1139 within 1,280 patches, to the nearest multiples
    assert f"{width} x {height} pixels" in llm_server.prompt_texts(0)


def test_an_image_file_read_by_qwen25_has_its_table_where_it_is(
    results_pdf: Path, tmp_path: Path, llm_server
) -> None:
    with pymupdf.open(results_pdf) as document:
        png = tmp_path / "results.png"
        document[0].get_pixmap(dpi=100).save(png)  # 850 x 1100: not multiples of 28
    llm_server.default = VisionReader(frame="qwen2.5")
    document = build_index(png, model=ModelClient("openai/qwen2.5-vl-7b"), abstract=False)
    (table,) = [node for node in document.pages[0].nodes if isinstance(node, TableNode)]
    # An image's points are its pixels: the table drawn at 100 dpi.
    scale = 100 / 72
    drawn = pymupdf.Rect(*(value * scale for value in RESULTS.rect))
    (x, y), (true_x, true_y) = centre(table.bbox), centre(drawn)
    assert abs(x - true_x) <= 3 and abs(y - true_y) <= 5
