"""DocumentLoaderPyMuPDF with ExtractThinker's ``PyMuPDFConfig`` (the framework's own loader, on its main
branch): the same config, keys and meaning, on real PDFs made with PyMuPDF, next to the loader's own options.
"""

from __future__ import annotations

import dataclasses
from io import BytesIO
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from extract_thinker.document_loader.document_loader import DocumentLoader
from PIL import Image
from pydantic import BaseModel, Field, model_validator

import extract_thinker_pageindex
from extract_thinker_pageindex import DocumentLoaderPyMuPDF, InvalidOptionError, PyMuPDFConfig
from extract_thinker_pageindex.loaders import PyMuPDFConfig as LoadersPyMuPDFConfig
from extract_thinker_pageindex.ocr.settings import engine_problem, ocr_settings
from scan_support import Line, PageSpec, make_scan, original_boxes

FIRST = "First page invoice"
SECOND = "Second page invoice"


# -- the framework's region model, with its constraints -------------------------------------------------


class BoundingBox(BaseModel):
    """ExtractThinker's ``BoundingBox``: a 1-based page and fractions of the drawn page."""

    page: int = Field(ge=1)
    x0: float = Field(ge=0, le=1)
    y0: float = Field(ge=0, le=1)
    x1: float = Field(ge=0, le=1)
    y1: float = Field(ge=0, le=1)

    @model_validator(mode="after")
    def ordered(self) -> BoundingBox:
        if self.x1 < self.x0 or self.y1 < self.y0:
            raise ValueError("x1 must be >= x0 and y1 >= y0")
        return self


class DocumentRegion(BaseModel):
    """ExtractThinker's ``DocumentRegion``."""

    text: str
    bounding_box: BoundingBox
    confidence: float | None = Field(default=None, ge=0, le=1)


def checked_regions(page: dict[str, Any]) -> list[DocumentRegion]:
    """The page's regions, each validated by the framework's model and exactly of its dumped shape."""
    regions = []
    for region in page["regions"]:
        assert set(region) == {"text", "bounding_box", "confidence"}
        assert set(region["bounding_box"]) == {"page", "x0", "y0", "x1", "y1"}
        assert region["confidence"] is None
        model = DocumentRegion.model_validate(region)
        assert model.model_dump() == region
        assert model.bounding_box.page == page["page_number"]
        regions.append(model)
    return regions


@dataclasses.dataclass
class FrameworkStyleConfig:
    """Stands in for ExtractThinker's own ``PyMuPDFConfig``: another class with the same six fields."""

    cache_ttl: int = 300
    password: str | None = None
    extract_tables: bool = False
    include_bbox: bool = False
    vision_enabled: bool = False
    dpi: int = 150


# -- PDFs ----------------------------------------------------------------------------------------------


@pytest.fixture
def invoice_bytes() -> bytes:
    """Two 300 x 400 pt pages with text at (40, 80); the second page is turned a quarter (``/Rotate 90``)."""
    with pymupdf.open() as document:
        page = document.new_page(width=300, height=400)
        page.insert_text((40, 80), FIRST)
        page = document.new_page(width=300, height=400)
        page.insert_text((40, 80), SECOND)
        page.set_rotation(90)
        return document.tobytes()


@pytest.fixture
def encrypted_bytes() -> bytes:
    with pymupdf.open() as document:
        document.new_page()
        return document.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="reader")


@pytest.fixture
def blank_bytes() -> bytes:
    with pymupdf.open() as document:
        document.new_page()
        return document.tobytes()


@pytest.fixture
def table_bytes() -> bytes:
    """A ruled 2 x 2 table: Item / Price, Pen / 2."""
    with pymupdf.open() as document:
        page = document.new_page(width=300, height=400)
        for x in (40, 140, 240):
            page.draw_line((x, 40), (x, 120))
        for y in (40, 80, 120):
            page.draw_line((40, y), (240, y))
        for x, y, text in [(50, 60, "Item"), (150, 60, "Price"), (50, 100, "Pen"), (150, 100, "2")]:
            page.insert_text((x, y), text)
        return document.tobytes()


@pytest.fixture
def layout_bytes() -> bytes:
    """One page: three text blocks drawn out of reading order (one of two lines), and a picture."""
    with pymupdf.open() as document:
        page = document.new_page(width=400, height=500)
        page.insert_text((50, 300), "Closing paragraph at the bottom of the page")
        page.insert_text((50, 60), "Heading of the page drawn last but read first")
        page.insert_text((50, 160), "A paragraph of two lines\nwhose second line is here")
        picture = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 40, 30), False)
        picture.set_rect(picture.irect, (200, 40, 40))
        page.insert_image(pymupdf.Rect(250, 350, 350, 430), pixmap=picture)
        return document.tobytes()


def image_size(png: bytes) -> tuple[int, int]:
    with Image.open(BytesIO(png)) as image:
        assert image.format == "PNG"
        return image.size


# -- the config object ---------------------------------------------------------------------------------


def test_config_has_the_framework_fields_in_order_with_its_defaults():
    fields = dataclasses.fields(PyMuPDFConfig)
    assert [(field.name, field.default) for field in fields] == [
        ("cache_ttl", 300),
        ("password", None),
        ("extract_tables", False),
        ("include_bbox", False),
        ("vision_enabled", False),
        ("dpi", 150),
    ]
    config = PyMuPDFConfig()
    config.dpi = 72  # a plain dataclass, not frozen, as the framework's
    assert config == PyMuPDFConfig(dpi=72)


def test_config_is_exported_from_the_package_and_its_loaders():
    assert extract_thinker_pageindex.PyMuPDFConfig is PyMuPDFConfig
    assert LoadersPyMuPDFConfig is PyMuPDFConfig
    assert "PyMuPDFConfig" in extract_thinker_pageindex.__all__


@pytest.mark.parametrize("cache_ttl", [0, -1, -0.5, True, "300", None, float("nan")])
def test_bad_cache_ttl_is_refused(cache_ttl):
    with pytest.raises(InvalidOptionError, match="cache_ttl must be positive") as info:
        PyMuPDFConfig(cache_ttl=cache_ttl)
    assert isinstance(info.value, ValueError)
    assert repr(cache_ttl) in str(info.value)


@pytest.mark.parametrize("dpi", [0, -1, True, 1.5, "150", None])
def test_bad_dpi_is_refused(dpi):
    with pytest.raises(InvalidOptionError, match="dpi must be a positive integer") as info:
        PyMuPDFConfig(dpi=dpi)
    assert isinstance(info.value, ValueError)


def test_a_config_changed_after_its_checks_is_checked_again_by_the_loader():
    config = PyMuPDFConfig()
    config.dpi = 0
    with pytest.raises(InvalidOptionError, match="dpi must be a positive integer"):
        DocumentLoaderPyMuPDF(config)


# -- the framework's behaviours ------------------------------------------------------------------------


def test_path_and_stream_give_the_same_pages(tmp_path: Path, invoice_bytes: bytes):
    path = tmp_path / "invoice.pdf"
    path.write_bytes(invoice_bytes)
    loader = DocumentLoaderPyMuPDF(PyMuPDFConfig(include_bbox=True))
    pages = loader.load(str(path))
    assert pages == loader.load(BytesIO(invoice_bytes))
    assert [page["page_number"] for page in pages] == [1, 2]
    assert FIRST in pages[0]["content"]
    assert SECOND in pages[1]["content"]


def test_by_default_no_image_and_no_regions(invoice_bytes: bytes):
    for loader in (DocumentLoaderPyMuPDF(), DocumentLoaderPyMuPDF(PyMuPDFConfig())):
        assert loader.vision_mode is False
        for page in loader.load(BytesIO(invoice_bytes)):
            assert "image" not in page
            assert "regions" not in page


def test_regions_align_with_the_rotated_render(invoice_bytes: bytes):
    loader = DocumentLoaderPyMuPDF(PyMuPDFConfig(include_bbox=True, vision_enabled=True, dpi=72))
    pages = loader.load(BytesIO(invoice_bytes))
    for page in pages:
        (region,) = checked_regions(page)
        assert region.text.strip() in page["content"]
    first = pages[0]["regions"][0]["bounding_box"]
    second = pages[1]["regions"][0]["bounding_box"]
    assert first["x0"] == pytest.approx(40 / 300)
    assert second["y0"] == pytest.approx(40 / 300)
    assert second["x0"] > 0.7
    # The text runs down the turned page: its box is tall and narrow there.
    assert second["y1"] - second["y0"] > 3 * (second["x1"] - second["x0"])


def test_images_are_the_pages_as_drawn(invoice_bytes: bytes):
    loader = DocumentLoaderPyMuPDF(PyMuPDFConfig(vision_enabled=True, dpi=72))
    assert loader.vision_mode is True
    pages = loader.load(BytesIO(invoice_bytes))
    assert image_size(pages[0]["image"]) == (300, 400)
    assert image_size(pages[1]["image"]) == (400, 300)


def test_dpi_sets_the_image_resolution(invoice_bytes: bytes):
    loader = DocumentLoaderPyMuPDF(PyMuPDFConfig(vision_enabled=True, dpi=144))
    assert image_size(loader.load(invoice_bytes)[0]["image"]) == (600, 800)


def test_max_image_size_bounds_the_longest_side(invoice_bytes: bytes):
    loader = DocumentLoaderPyMuPDF(PyMuPDFConfig(dpi=72))
    loader.set_vision_mode(True)
    loader.set_max_image_size(100)
    pages = loader.load(BytesIO(invoice_bytes))
    assert [image_size(page["image"]) for page in pages] == [(75, 100), (100, 75)]
    # The two-step load behind retrieval draws the same images.
    assert loader.page_images(invoice_bytes, [1, 2]) == {1: pages[0]["image"], 2: pages[1]["image"]}
    loader.set_max_image_size(1000)  # a limit above the drawn size leaves it as it is
    assert image_size(loader.load(invoice_bytes)[0]["image"]) == (300, 400)
    loader.set_vision_mode(False)
    assert "image" not in loader.load(invoice_bytes)[0]


@pytest.mark.parametrize("size", [0, -100, 1.5, True, "100"])
def test_bad_max_image_size_is_refused(size):
    with pytest.raises(InvalidOptionError, match="positive number of pixels"):
        DocumentLoaderPyMuPDF().set_max_image_size(size)


def test_an_encrypted_pdf_needs_the_configs_password(encrypted_bytes: bytes):
    with pytest.raises(ValueError, match="password"):
        DocumentLoaderPyMuPDF().load(BytesIO(encrypted_bytes))
    with pytest.raises(ValueError, match="password"):
        DocumentLoaderPyMuPDF(PyMuPDFConfig(password="wrong")).load(BytesIO(encrypted_bytes))
    pages = DocumentLoaderPyMuPDF(PyMuPDFConfig(password="reader")).load(BytesIO(encrypted_bytes))
    assert len(pages) == 1


def test_a_blank_page_has_no_text_tables_or_regions(blank_bytes: bytes):
    loader = DocumentLoaderPyMuPDF(PyMuPDFConfig(extract_tables=True, include_bbox=True))
    (page,) = loader.load(BytesIO(blank_bytes))
    assert page["content"] == ""
    assert page["tables"] == []
    assert page["regions"] == []


def test_extract_tables_reads_a_ruled_table(table_bytes: bytes):
    loader = DocumentLoaderPyMuPDF(PyMuPDFConfig(extract_tables=True))
    (page,) = loader.load(BytesIO(table_bytes))
    assert page["tables"] == [[["Item", "Price"], ["Pen", "2"]]]
    assert page["text_source"] == "text_layer"


def test_cache_ttl_reaches_the_base_loader():
    loader = DocumentLoaderPyMuPDF(PyMuPDFConfig(cache_ttl=60))
    assert isinstance(loader, DocumentLoader)
    assert loader.cache.ttl == 60
    assert DocumentLoaderPyMuPDF().cache.ttl == 300


# -- regions -------------------------------------------------------------------------------------------


def test_regions_are_the_text_blocks_in_reading_order(layout_bytes: bytes):
    (page,) = DocumentLoaderPyMuPDF(include_bbox=True).load(layout_bytes)
    regions = checked_regions(page)
    assert [region.text for region in regions] == [
        "Heading of the page drawn last but read first",
        "A paragraph of two lines\nwhose second line is here",
        "Closing paragraph at the bottom of the page",
    ]  # the picture is no region
    tops = [region.bounding_box.y0 for region in regions]
    assert tops == sorted(tops)
    heading = regions[0].bounding_box
    assert heading.x0 == pytest.approx(50 / 400)
    assert heading.y1 == pytest.approx(60 / 500, abs=0.01)  # about the baseline


def test_regions_are_fractions_of_the_crop_box():
    with pymupdf.open() as document:
        page = document.new_page(width=600, height=800)
        page.insert_text((100, 150), "Words inside the cropped area of the page")
        page.insert_text((5, 790), "Words cut off by the crop box")
        page.set_cropbox(pymupdf.Rect(40, 60, 560, 700))
        data = document.tobytes()
    (page,) = DocumentLoaderPyMuPDF(include_bbox=True).load(data)
    (region,) = checked_regions(page)
    assert region.bounding_box.x0 == pytest.approx((100 - 40) / 520)
    assert region.bounding_box.y1 == pytest.approx((150 - 60) / 640, abs=0.01)


def test_regions_keep_the_pdf_page_numbers_of_a_selection(invoice_bytes: bytes):
    pages = DocumentLoaderPyMuPDF(include_bbox=True, pages="2").load(invoice_bytes)
    assert [page["page_number"] for page in pages] == [2]
    assert checked_regions(pages[0])[0].bounding_box.page == 2
    (chosen,) = DocumentLoaderPyMuPDF(include_bbox=True).load_pages(invoice_bytes, [2])
    assert chosen["regions"] == pages[0]["regions"]


def test_the_text_step_of_a_two_step_load_has_the_regions(invoice_bytes: bytes):
    loader = DocumentLoaderPyMuPDF(PyMuPDFConfig(include_bbox=True, vision_enabled=True, dpi=20))
    full = loader.load(invoice_bytes)
    text = loader.load_text(invoice_bytes)
    assert [page["regions"] for page in text] == [page["regions"] for page in full]
    assert all("image" not in page for page in text)


def test_regions_of_a_page_read_by_ocr(tmp_path: Path):
    if engine_problem(ocr_settings()) is not None:
        pytest.skip(f"no OCR engine: {engine_problem(ocr_settings())}")
    spec = PageSpec([Line("Termination Schedule", 100, size=22), Line("Notice is ninety days.", 160)])
    path = make_scan(tmp_path / "scan.pdf", [spec])
    with pymupdf.open(path) as document:
        document[0].set_rotation(90)
        document.saveIncr()
    (page,) = DocumentLoaderPyMuPDF(include_bbox=True, ocr_workers=1).load(str(path))
    assert page["text_source"] == "ocr"
    regions = checked_regions(page)
    assert any("Termination" in region.text for region in regions)
    assert all(region.text.strip() in page["content"] for region in regions)
    # The heading's box, on the turned page, is where the born-digital heading would be drawn.
    (printed,) = original_boxes([spec], 0, "Termination Schedule")
    with pymupdf.open(path) as document:
        turned = printed * document[0].rotation_matrix
        width, height = document[0].rect.width, document[0].rect.height
    heading = next(region.bounding_box for region in regions if "Termination" in region.text)
    assert heading.x0 == pytest.approx(turned.x0 / width, abs=0.02)
    assert heading.y0 == pytest.approx(turned.y0 / height, abs=0.02)
    assert heading.y1 == pytest.approx(turned.y1 / height, abs=0.02)


# -- the config next to the loader's own keywords ------------------------------------------------------


def test_config_fields_map_to_the_keywords(table_bytes: bytes):
    config = PyMuPDFConfig(
        cache_ttl=42, password="pw", extract_tables=True, include_bbox=True, vision_enabled=True, dpi=96
    )
    loader = DocumentLoaderPyMuPDF(config)
    assert (loader.password, loader.tables, loader.include_bbox, loader.dpi) == ("pw", True, True, 96)
    assert loader.vision_mode is True
    assert loader.config == config
    keywords = DocumentLoaderPyMuPDF(tables=True, include_bbox=True, dpi=96)
    keywords.set_vision_mode(True)
    assert DocumentLoaderPyMuPDF(
        PyMuPDFConfig(extract_tables=True, include_bbox=True, vision_enabled=True, dpi=96)
    ).load(table_bytes) == keywords.load(table_bytes)


def test_another_class_with_the_six_fields_is_taken(invoice_bytes: bytes):
    ours = PyMuPDFConfig(include_bbox=True, extract_tables=True, vision_enabled=True, dpi=72)
    theirs = FrameworkStyleConfig(include_bbox=True, extract_tables=True, vision_enabled=True, dpi=72)
    loader = DocumentLoaderPyMuPDF(theirs)
    assert loader.vision_mode is True
    assert loader.load(invoice_bytes) == DocumentLoaderPyMuPDF(ours).load(invoice_bytes)


def test_another_class_with_a_bad_value_is_refused():
    with pytest.raises(InvalidOptionError, match="cache_ttl must be positive"):
        DocumentLoaderPyMuPDF(FrameworkStyleConfig(cache_ttl=0))


@pytest.mark.parametrize(
    "keywords",
    [{"password": "pw"}, {"tables": False}, {"dpi": 200}, {"include_bbox": True}, {"cache_ttl": 60}],
    ids=lambda keywords: next(iter(keywords)),
)
def test_a_keyword_the_config_also_sets_is_refused(keywords):
    name, value = next(iter(keywords.items()))
    with pytest.raises(InvalidOptionError, match="pass each option one way") as info:
        DocumentLoaderPyMuPDF(PyMuPDFConfig(), **keywords)
    assert f"{name}={value!r}" in str(info.value)


def test_cache_ttl_given_positionally_beside_a_config_is_refused():
    with pytest.raises(InvalidOptionError, match="cache_ttl=60"):
        DocumentLoaderPyMuPDF(PyMuPDFConfig(), 60)


def test_keywords_the_config_does_not_set_go_with_it(invoice_bytes: bytes):
    loader = DocumentLoaderPyMuPDF(PyMuPDFConfig(include_bbox=True), pages="2", ocr="never", content="kept")
    (page,) = loader.load(invoice_bytes)
    assert page["page_number"] == 2
    assert page["regions"]
    assert loader.getContent() == "kept"


@pytest.mark.parametrize("first", ["some content", 42, {"dpi": 72}])
def test_a_first_argument_that_is_no_config_is_refused(first):
    with pytest.raises(InvalidOptionError, match="must be a PyMuPDFConfig") as info:
        DocumentLoaderPyMuPDF(first)
    assert "content=" in str(info.value)


@pytest.mark.parametrize("cls", [PyMuPDFConfig, FrameworkStyleConfig])
def test_a_config_class_instead_of_an_instance_is_refused(cls):
    with pytest.raises(InvalidOptionError, match=rf"instance; got the class {cls.__name__} itself"):
        DocumentLoaderPyMuPDF(cls)


def test_the_base_loaders_content_is_a_keyword():
    assert DocumentLoaderPyMuPDF(content="text").getContent() == "text"
    assert DocumentLoaderPyMuPDF().getContent() is None


def test_config_of_a_loader_built_from_keywords():
    loader = DocumentLoaderPyMuPDF(password="pw", tables=True, dpi=72)
    loader.set_vision_mode(True)
    assert loader.config == PyMuPDFConfig(password="pw", extract_tables=True, vision_enabled=True, dpi=72)
