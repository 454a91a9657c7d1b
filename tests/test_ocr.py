"""OCR of scanned pages without a model: real Tesseract (through tesserocr, and through the one inside
PyMuPDF) on real generated scans, in the loader, behind retrieval, in the page index, in parallel workers,
in the keys and on the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from extract_thinker import Contract, Extractor

from extract_thinker_pageindex import (
    DocumentLoaderPyMuPDF,
    DocumentLoaderRAG,
    InvalidOptionError,
    ModelRequiredError,
    OcrError,
    PageIndexWarning,
    build_index,
    load_index,
    save_index,
)
from extract_thinker_pageindex.cli.summary import inspect
from extract_thinker_pageindex.index_key import cache_key, options_key
from extract_thinker_pageindex.ocr.engines import plain_text, read_page
from extract_thinker_pageindex.ocr.settings import (
    READER_VARIABLE,
    engine_problem,
    ocr_settings,
    tesseract_reader,
)
from scan_support import (
    RESULTS,
    RESULTS_PAGE,
    Line,
    PageSpec,
    Table,
    born_digital,
    make_scan,
    ocr_worker_children,
    original_boxes,
)

CONTRACT = [
    PageSpec(
        [
            Line("Termination Schedule", 100, size=22),
            Line("The supplier may terminate this agreement with ninety days notice.", 140),
            Line("An early termination penalty of fifty percent of the remaining fees applies.", 158),
            Line("Invoices are payable within thirty days of receipt.", 176),
        ]
    ),
    PageSpec(
        [Line("Payment terms: the customer pays every invoice by bank transfer in euros.", 100)], "text"
    ),
    PageSpec(
        [
            Line("Confidentiality Obligations", 100, size=22),
            Line("Each party keeps the other party's confidential information secret for five years.", 140),
        ]
    ),
]


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_scan(tmp_path_factory.mktemp("scan") / "contract-scan.pdf", CONTRACT)


def words(text: str) -> set[str]:
    return {word.strip(".,'").lower() for word in text.split()}


# -- the options ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"ocr": "sometimes"}, "ocr must be one of"),
        ({"ocr_engine": "abbyy"}, "ocr_engine must be one of"),
        ({"ocr_languages": ""}, "ocr_languages"),
        ({"ocr_languages": "eng;rm -rf"}, "ocr_languages"),
        ({"ocr_languages": 5}, "ocr_languages"),
        ({"ocr_workers": 0}, "ocr_workers"),
        ({"ocr_workers": True}, "ocr_workers"),
        ({"ocr_dpi": 20}, "ocr_dpi"),
    ],
)
def test_bad_ocr_options_are_refused_before_any_page_is_read(options: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidOptionError, match=message):
        DocumentLoaderPyMuPDF(**options)
    with pytest.raises(InvalidOptionError, match=message):
        build_index("/no/such/file.pdf", **options)  # the options are checked before the file is opened


def test_languages_are_accepted_in_every_spelling() -> None:
    assert ocr_settings(ocr_languages="eng+deu").languages == ("eng", "deu")
    assert ocr_settings(ocr_languages=["eng", "deu", "eng"]).languages == ("eng", "deu")
    assert ocr_settings(ocr=True).mode == "always" and ocr_settings(ocr=False).mode == "never"


# -- the loader -----------------------------------------------------------------------------------------


def test_scanned_pages_are_read_and_born_digital_ones_keep_their_text_layer(scan: Path) -> None:
    pages = DocumentLoaderPyMuPDF().load(str(scan))
    assert [page["text_source"] for page in pages] == ["ocr", "text_layer", "ocr"]
    assert {"termination", "penalty", "ninety", "invoices"} <= words(pages[0]["content"])
    assert pages[0]["markdown"] == pages[0]["content"]
    assert pages[1]["content"].strip() == CONTRACT[1].lines[0].text
    assert {"confidentiality", "secret", "years"} <= words(pages[2]["content"])


def test_ocr_never_keeps_scans_empty_and_always_reads_every_page(scan: Path) -> None:
    never = DocumentLoaderPyMuPDF(ocr="never").load(str(scan))
    assert [page["content"].strip() for page in never][0::2] == ["", ""]
    always = DocumentLoaderPyMuPDF(ocr="always", pages="2").load(str(scan))
    assert always[0]["text_source"] == "ocr"
    assert {"payment", "customer", "invoice", "transfer"} <= words(always[0]["content"])


def test_stray_glyphs_over_a_scan_are_not_a_text_layer(tmp_path: Path) -> None:
    spec = PageSpec(
        [Line("Schedule of Delivery Dates", 100, size=20), Line("Deliveries arrive on Mondays.", 140)]
    )
    path = make_scan(tmp_path / "stamped.pdf", [PageSpec(spec.lines, "stray")])
    assert pymupdf.open(path)[0].get_text().strip() == "ABC000123"  # the stamp is the whole text layer
    page = DocumentLoaderPyMuPDF().load(str(path))[0]
    assert page["text_source"] == "ocr"
    assert {"delivery", "deliveries", "mondays"} <= words(page["content"])


def test_a_born_digital_page_over_a_full_page_picture_is_not_ocrd(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 60, 80), False)
    pixmap.set_rect(pixmap.irect, (230, 230, 250))
    page.insert_image(page.rect, pixmap=pixmap)  # a background covering the whole page
    text = "A born-digital letter on a tinted background, with words enough to be a real text layer (100+)."
    text += "\nIt is read from its text layer and never drawn for OCR."
    page.insert_text((72, 100), text, fontsize=10)
    document.save(tmp_path / "letter.pdf")
    loaded = DocumentLoaderPyMuPDF().load(str(tmp_path / "letter.pdf"))[0]
    assert loaded["text_source"] == "text_layer"
    assert loaded["content"].strip() == text


def test_a_few_words_over_a_full_page_gradient_are_a_text_layer_not_a_scan(tmp_path: Path) -> None:
    # A shading (a gradient) is drawn, not a picture: a cover page of a title over a gradient is not a scan
    # with stray glyphs on it, and is read from its text layer.
    document = pymupdf.open()
    page = document.new_page()
    shading = document.get_new_xref()
    document.update_object(
        shading,
        "<< /ShadingType 2 /ColorSpace /DeviceRGB /Coords [0 0 612 792] /Extend [true true] "
        "/Function << /FunctionType 2 /Domain [0 1] /C0 [0.1 0.2 0.6] /C1 [0.9 0.9 1] /N 1 >> >>",
    )
    page.insert_text((72, 100), "Annual Report 2026: a cover title", fontsize=20)  # under 100 characters
    contents = page.get_contents()[0]
    document.update_stream(contents, b"q /Sh1 sh Q\n" + document.xref_stream(contents))
    resources = document.xref_get_key(page.xref, "Resources")
    if resources[0] == "xref":
        resources_xref = int(resources[1].split()[0])
        document.xref_set_key(resources_xref, "Shading", f"<< /Sh1 {shading} 0 R >>")
    else:
        document.xref_set_key(page.xref, "Resources/Shading", f"<< /Sh1 {shading} 0 R >>")
    document.save(tmp_path / "cover.pdf")
    with pymupdf.open(tmp_path / "cover.pdf") as saved:  # the premise: the gradient covers the page
        pixmap = saved[0].get_pixmap(dpi=20)
        assert pixmap.pixel(2, 2) != pixmap.pixel(pixmap.width - 3, pixmap.height - 3) != (255, 255, 255)

    loaded = DocumentLoaderPyMuPDF().load(str(tmp_path / "cover.pdf"))[0]
    assert loaded["text_source"] == "text_layer"
    assert loaded["content"].strip() == "Annual Report 2026: a cover title"


def test_blank_and_picture_pages_give_no_text_and_no_error(tmp_path: Path) -> None:
    path = make_scan(tmp_path / "pictures.pdf", [PageSpec(kind="blank"), PageSpec(kind="photo")])
    pages = DocumentLoaderPyMuPDF().load(str(path))
    assert [page["content"].strip() for page in pages] == ["", ""]
    assert [page["text_source"] for page in pages] == ["ocr", "ocr"]


def test_missing_language_data_warns_once_under_auto_and_fails_under_always(scan: Path) -> None:
    loader = DocumentLoaderPyMuPDF(ocr_languages="zzz")
    with pytest.warns(PageIndexWarning, match=r"Page\(s\) 1, 3 .*not OCR'd.*zzz.*tesseract-ocr-zzz") as seen:
        pages = loader.load(str(scan))
    assert len([warning for warning in seen if issubclass(warning.category, PageIndexWarning)]) == 1
    assert pages[0]["content"].strip() == "" and pages[1]["text_source"] == "text_layer"
    with pytest.raises(OcrError, match=r"OCR cannot run: .*zzz.*Install it"):
        DocumentLoaderPyMuPDF(ocr="always", ocr_languages="zzz").load(str(scan))
    assert engine_problem(ocr_settings(ocr_languages="eng")) is None


def test_rapidocr_reads_a_scan_into_the_same_nodes(scan: Path, rapidocr_engine: None) -> None:
    pages = DocumentLoaderPyMuPDF(ocr_engine="rapidocr", pages="1").load(str(scan))
    assert pages[0]["text_source"] == "ocr"
    assert {"termination", "penalty", "ninety"} <= words(pages[0]["content"])
    document = build_index(scan, ocr_engine="rapidocr", pages="1", abstract=False)
    assert document.pages[0].origin is not None and document.pages[0].origin.engine == "rapidocr (eng)"
    heading = next(node for node in document.pages[0].nodes if node.type == "heading")
    assert heading.content == "Termination Schedule"
    assert heading.bbox is not None
    assert pymupdf.Rect(heading.bbox).intersects(original_boxes(CONTRACT, 0, "Termination Schedule")[0])


def test_rapidocr_missing_or_asked_for_another_language_is_a_clear_error(
    scan: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(OcrError, match="bundled models read"):
        DocumentLoaderPyMuPDF(ocr="always", ocr_engine="rapidocr", ocr_languages="deu").load(str(scan))
    monkeypatch.setitem(sys.modules, "rapidocr", None)  # as if it were not installed
    with pytest.raises(OcrError, match=r"RapidOCR is not installed.*\[rapidocr\]"):
        DocumentLoaderPyMuPDF(ocr="always", ocr_engine="rapidocr").load(str(scan))


def test_workers_read_the_same_text_as_one_process_and_leave_none_behind(scan: Path) -> None:
    one = DocumentLoaderPyMuPDF(ocr_workers=1).load(str(scan))
    two = DocumentLoaderPyMuPDF(ocr_workers=2).load(str(scan))
    assert [page["content"] for page in one] == [page["content"] for page in two]
    assert ocr_worker_children() == []


def test_an_interrupted_ocr_leaves_no_worker_running_and_nothing_written(scan: Path, tmp_path: Path) -> None:
    seen: list[int] = []

    def progress(done: int, total: int) -> None:
        seen.append(done)
        if len(seen) == 2:  # the born-digital page, then the first OCR'd one
            raise KeyboardInterrupt

    target = tmp_path / "contract.pageindex"
    with pytest.raises(KeyboardInterrupt):
        from extract_thinker_pageindex import index_document

        index_document(scan, output=target, ocr_workers=2, progress=progress)
    assert ocr_worker_children() == []
    assert not target.exists()
    assert [path.name for path in tmp_path.iterdir()] == []


def test_pages_ocrd_from_two_threads_at_once_are_both_right(scan: Path) -> None:
    # MuPDF's Tesseract cannot run in two threads of one process: in-process OCR is serialised.
    results: dict[int, list[dict[str, Any]]] = {}

    def load(slot: int) -> None:
        results[slot] = DocumentLoaderPyMuPDF(ocr_workers=1, pages=str(1 + 2 * slot)).load(str(scan))

    threads = [threading.Thread(target=load, args=(slot,)) for slot in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert "termination" in words(results[0][0]["content"])
    assert "confidentiality" in words(results[1][0]["content"])


# -- the two ways Tesseract runs ------------------------------------------------------------------------


def test_tesserocr_is_the_default_reader_where_installed_and_the_variable_picks_either(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(READER_VARIABLE, raising=False)
    assert tesseract_reader() == "tesserocr"  # the [dev] extra brings it, as [ocr] does
    monkeypatch.setenv(READER_VARIABLE, "PyMuPDF")
    assert tesseract_reader() == "pymupdf"
    monkeypatch.setenv(READER_VARIABLE, "ocrmypdf")
    with pytest.raises(InvalidOptionError, match=READER_VARIABLE):
        DocumentLoaderPyMuPDF(ocr="always").load(str(Path(__file__)))


def test_the_way_tesseract_runs_is_in_the_cache_key(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"%PDF-1.7 the same bytes"
    rapid = {"ocr_engine": "rapidocr"}
    monkeypatch.setenv(READER_VARIABLE, "tesserocr")
    with_tesserocr, rapid_then = cache_key(data, "pdf", {}), cache_key(data, "pdf", rapid)
    monkeypatch.setenv(READER_VARIABLE, "pymupdf")
    assert cache_key(data, "pdf", {}) != with_tesserocr
    assert cache_key(data, "pdf", rapid) == rapid_then  # RapidOCR's key does not depend on Tesseract's way
    assert "reader" not in ocr_settings(ocr_engine="rapidocr").key()


@pytest.mark.parametrize("reader", ["tesserocr", "pymupdf"])
def test_both_readers_give_the_scan_its_words_headings_and_ruled_table(
    reader: str, scan: Path, table_scan: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(READER_VARIABLE, reader)  # the worker processes inherit it
    pages = DocumentLoaderPyMuPDF(ocr_workers=2).load(str(scan))
    assert {"termination", "penalty", "ninety", "invoices"} <= words(pages[0]["content"])
    assert {"confidentiality", "secret", "years"} <= words(pages[2]["content"])
    (page,) = DocumentLoaderPyMuPDF(ocr_workers=1).load(str(table_scan))
    assert page["tables"] == [[list(row) for row in RESULTS.cells]]
    document = build_index(scan, abstract=False, ocr_workers=1)
    assert [entry.title for entry in document.toc] == ["Termination Schedule", "Confidentiality Obligations"]


LEFT = (
    "Alpha column opens with this line",
    "and carries on along another one",
    "where the parties agree to meet",
    "every month at the main office",
    "to review the open orders and",
    "the deliveries still outstanding",
    "before it ends on its last line.",
)
RIGHT = (
    "Beta column starts over here",
    "with words of its very own that",
    "describe the warranty period of",
    "twelve months from the delivery",
    "date for every product sold in",
    "the territory named in the annex",
    "and close the right side.",
)
TWO_COLUMNS = PageSpec(
    [Line(text, 100 + 16 * row, x=60) for row, text in enumerate(LEFT)]
    + [Line(text, 100 + 16 * row, x=320) for row, text in enumerate(RIGHT)]
)


def test_tesserocr_keeps_each_column_of_a_two_column_scan_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # MuPDF gathers the words of one height into one line across the gutter; Tesseract's own text lines
    # stay in their column, so the left column reads whole before the right one begins.
    monkeypatch.setenv(READER_VARIABLE, "tesserocr")
    path = make_scan(tmp_path / "columns.pdf", [TWO_COLUMNS], dpi=200)
    with pymupdf.open(path) as document:
        read = read_page(document[0], ocr_settings(ocr="always"))
    text = plain_text(read.blocks)
    assert text.index("Alpha") < text.index("last line") < text.index("Beta") < text.index("right side")
    for block in read.blocks:
        for line in block["lines"]:
            x0, _, x1, _ = line["bbox"]
            assert x1 < 315 or x0 > 315  # no line crosses the gutter
    assert {"alpha", "carries", "outstanding", "beta", "warranty", "annex"} <= words(text)


def test_a_scanned_page_with_only_a_rule_reads_as_empty_not_as_a_failure(tmp_path: Path) -> None:
    # A 10-Q's blank back page with a header rule: Tesseract finds a text region and no text in it.
    original = pymupdf.open()
    original.new_page().draw_line((30, 20), (580, 20), width=0.6, color=(0.6, 0.6, 0.6))
    scan_doc = pymupdf.open()
    page = scan_doc.new_page()
    page.insert_image(
        page.rect, stream=original[0].get_pixmap(dpi=200, colorspace=pymupdf.csGRAY).tobytes("png")
    )
    scan_doc.save(tmp_path / "rule.pdf")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an OCR failure would be a PageIndexWarning
        (loaded,) = DocumentLoaderPyMuPDF(ocr="always", ocr_workers=1).load(str(tmp_path / "rule.pdf"))
    assert loaded["text_source"] == "ocr" and loaded["content"].strip() == ""


def test_a_label_far_left_of_its_value_is_a_line_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(READER_VARIABLE, "tesserocr")
    spec = PageSpec(
        [
            Line("Operating revenues for the year", 100),
            Line("Total net revenues", 130),
            Line("1,234,567", 130, x=420),
        ]
    )
    path = make_scan(tmp_path / "gap.pdf", [spec], dpi=200)
    with pymupdf.open(path) as document:
        read = read_page(document[0], ocr_settings(ocr="always"))
    lines = [
        "".join(span["text"] for span in line["spans"]) for block in read.blocks for line in block["lines"]
    ]
    assert "Total net revenues" in lines and "1,234,567" in lines


# -- behind retrieval -----------------------------------------------------------------------------------


class Penalty(Contract):
    penalty: str


def test_retrieval_finds_words_on_scanned_pages_and_the_extractor_gets_them(
    scan: Path, llm_server: Any
) -> None:
    with DocumentLoaderRAG(DocumentLoaderPyMuPDF(), query="early termination penalty", max_pages=1) as loader:
        pages = loader.load(str(scan))
        assert [page["page_number"] for page in pages] == [1]
        llm_server.reply_json({"penalty": "fifty percent"})
        extractor = Extractor(loader)
        extractor.load_llm("openai/test-model")
        result = extractor.extract(str(scan), Penalty)
    assert result.penalty == "fifty percent"
    prompt = llm_server.prompt_texts()
    assert "penalty of fifty percent" in prompt and "Confidentiality" not in prompt


# -- the page index -------------------------------------------------------------------------------------


def test_a_scan_becomes_real_nodes_with_boxes_where_the_text_is(scan: Path) -> None:
    document = build_index(scan, abstract=False)
    assert [page.origin.source for page in document.pages if page.origin] == ["ocr", "text_layer", "ocr"]
    assert document.pages[0].origin is not None and document.pages[0].origin.engine == "tesseract (eng)"
    first = document.pages[0].nodes
    heading = next(node for node in first if node.type == "heading")
    assert heading.content == "Termination Schedule"
    # The ink OCR found lies inside the box PyMuPDF gives the born-digital words (which spans the font's
    # ascent and descent), and fills most of it.
    expected = original_boxes(CONTRACT, 0, "Termination Schedule")[0]
    assert heading.bbox is not None
    box = pymupdf.Rect(heading.bbox)
    assert pymupdf.Rect(expected.x0 - 2, expected.y0 - 2, expected.x1 + 2, expected.y1 + 2).contains(box)
    assert box.width >= 0.9 * expected.width and box.height >= 0.5 * expected.height
    paragraphs = [node for node in first if node.type == "paragraph"]
    assert paragraphs and {"ninety", "penalty", "invoices"} <= words(" ".join(p.content for p in paragraphs))
    assert not [node for node in first if node.type == "image"]  # the scan itself is the page, not a picture
    assert [entry.title for entry in document.toc] == ["Termination Schedule", "Confidentiality Obligations"]
    assert document.title == "Termination Schedule"


@pytest.fixture(scope="module")
def table_scan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_scan(tmp_path_factory.mktemp("table") / "results-scan.pdf", [RESULTS_PAGE])


def test_a_ruled_table_on_a_scan_becomes_a_table_node_with_its_cells(table_scan: Path) -> None:
    # Tesseract alone leaves the words of a boxed region unread: the rules are painted out first.
    document = build_index(table_scan, abstract=False)
    nodes = document.pages[0].nodes
    assert [node.type for node in nodes if node.type != "section"] == [
        "heading",
        "paragraph",
        "table",
        "paragraph",
    ]
    (table,) = [node for node in nodes if node.type == "table"]
    assert table.content.splitlines() == [
        "| Region | Revenue | Costs |",
        "|---|---|---|",
        "| Europe | 1,234 | 567 |",
        "| Americas | 2,345 | 1,024 |",
        "| Asia | 987 | 432 |",
    ]
    assert table.bbox is not None
    drawn = RESULTS.rect
    assert pymupdf.Rect(drawn.x0 - 3, drawn.y0 - 3, drawn.x1 + 3, drawn.y1 + 3).contains(
        pymupdf.Rect(table.bbox)
    )
    assert pymupdf.Rect(table.bbox).width >= drawn.width - 3
    # The cells are the table's, not paragraphs of their own.
    assert "Americas" not in " ".join(node.content for node in nodes if node.type == "paragraph")


def test_the_loader_gives_an_ocr_table_as_markdown_in_place_and_as_rows(table_scan: Path) -> None:
    (page,) = DocumentLoaderPyMuPDF().load(str(table_scan))
    assert page["text_source"] == "ocr"
    assert page["tables"] == [[list(row) for row in RESULTS.cells]]
    text = page["content"]
    assert "| Americas | 2,345 | 1,024 |" in text
    assert text.index("The table below") < text.index("| Region |") < text.index("Costs fell")


def test_rapidocr_reads_the_same_table(table_scan: Path, rapidocr_engine: None) -> None:
    (page,) = DocumentLoaderPyMuPDF(ocr_engine="rapidocr").load(str(table_scan))
    assert page["tables"] == [[list(row) for row in RESULTS.cells]]


def _grids_of(spec: PageSpec, tmp_path: Path) -> list[Any]:
    from extract_thinker_pageindex.ocr.tables import find_grids

    path = make_scan(tmp_path / "page.pdf", [spec])
    with pymupdf.open(path) as document:
        pixmap = document[0].get_pixmap(dpi=150, colorspace=pymupdf.csGRAY)
    import numpy

    gray = numpy.frombuffer(pixmap.samples, dtype=numpy.uint8).reshape(pixmap.height, pixmap.width)
    return find_grids(gray, 150)


def test_underlines_rules_and_pictures_are_not_tables(tmp_path: Path) -> None:
    # A rule under a heading, a line across the page and a photograph: long dark runs, but no grid.
    spec = PageSpec([Line("Heading", 100, size=18)], kind="photo")
    assert _grids_of(spec, tmp_path) == []
    rules = Table(columns=(72, 540), rows=(300, 302), cells=(), rule_width=0.5)  # two close rules, no columns
    only_rows = PageSpec([Line("A ruled page", 100)], tables=[rules])
    assert all(len(grid.columns) < 2 or len(grid.rows) < 2 for grid in _grids_of(only_rows, tmp_path))


def test_two_tables_on_a_page_are_two_grids_with_their_own_rows(tmp_path: Path) -> None:
    small = Table(columns=(72, 200, 300), rows=(400, 425, 450), cells=(("Item", "Qty"), ("Bolts", "12")))
    grids = _grids_of(PageSpec(tables=[RESULTS, small]), tmp_path)
    assert [(len(grid.rows), len(grid.columns)) for grid in grids] == [(5, 4), (3, 3)]


def test_ocr_pages_are_not_sent_to_a_model_and_empty_ones_are(tmp_path: Path, llm_server: Any) -> None:
    path = make_scan(tmp_path / "mixed.pdf", [CONTRACT[0], PageSpec(kind="photo")])
    llm_server.reply_json(
        {"nodes": [{"type": "image", "id": "n1", "kind": "photo", "description": "A logo."}]}
    )
    document = build_index(path, model="openai/test-vision", abstract=False, title="Mixed")
    page_reads = [body for body in llm_server.requests if "image_url" in json.dumps(body)]
    assert len(page_reads) == 1  # the photograph only: OCR read the other page
    assert [page.origin.source for page in document.pages if page.origin] == ["ocr", "vision"]
    assert document.pages[1].origin is not None and document.pages[1].origin.engine == "openai/test-vision"


def test_a_picture_page_without_a_model_is_kept_as_a_picture_not_refused(tmp_path: Path) -> None:
    path = make_scan(tmp_path / "photo.pdf", [PageSpec(kind="photo"), CONTRACT[2]])
    document = build_index(path, abstract=False)
    assert [node.type for node in document.pages[0].nodes] == ["image"]
    assert "Confidentiality Obligations" in [
        node.content for node in document.pages[1].nodes if node.type == "heading"
    ]


def test_without_ocr_a_scan_still_asks_for_a_model_and_names_ocr(scan: Path) -> None:
    with pytest.raises(ModelRequiredError, match="ocr='auto'"):
        build_index(scan, ocr="never")
    with pytest.raises(ModelRequiredError, match=r"zzz.*tesseract-ocr-zzz"):
        build_index(scan, ocr_languages="zzz")
    with pytest.raises(OcrError):
        build_index(scan, ocr="always", ocr_languages="zzz")


def test_progress_counts_every_page_once_ocr_included(scan: Path) -> None:
    seen: list[tuple[int, int]] = []
    build_index(scan, abstract=False, ocr_workers=2, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_the_page_index_loader_serves_a_scan_and_caches_it_per_ocr_setting(
    scan: Path, tmp_path: Path
) -> None:
    from extract_thinker_pageindex import DocumentLoaderPageIndex

    loader = DocumentLoaderPageIndex(cache_dir=tmp_path / "cache")
    pages = loader.load(str(scan))
    assert "# Termination Schedule" in pages[0]["content"]
    assert "penalty" in words(pages[0]["content"])
    again = DocumentLoaderPageIndex(cache_dir=tmp_path / "cache")
    again.load(str(scan))
    assert again.last_from_cache
    # Other OCR settings are another index: never served the one OCR built.
    other = DocumentLoaderPageIndex(cache_dir=tmp_path / "cache", ocr="never", on_page_error="skip")
    with pytest.warns(PageIndexWarning, match="no text layer"):
        empty = other.load(str(scan))
    assert not other.last_from_cache
    assert "penalty" not in words(empty[0]["content"])


def test_a_batch_of_scans_is_ocrd_one_document_per_worker(scan: Path, tmp_path: Path) -> None:
    from extract_thinker_pageindex import index_documents

    folder = tmp_path / "scans"
    folder.mkdir()
    for name in ("a.pdf", "b.pdf"):
        (folder / name).write_bytes(scan.read_bytes())
    report = index_documents([folder], tmp_path / "out", workers=2, abstract=False)
    assert [entry.status for entry in report.entries] == ["ok", "ok"]
    for entry in report.entries:
        document = load_index(entry.output)
        assert [page.origin.source for page in document.pages if page.origin] == ["ocr", "text_layer", "ocr"]
    # The manifest's key holds the OCR settings: the same run skips, other settings build again.
    assert index_documents([folder], tmp_path / "out", workers=2, abstract=False).count("skipped") == 2
    redone = index_documents([folder], tmp_path / "out", workers=2, abstract=False, ocr_dpi=200)
    assert redone.count("ok") == 2


def test_the_origin_is_saved_loaded_and_shown_by_inspect(scan: Path, tmp_path: Path) -> None:
    target = save_index(build_index(scan, abstract=False), tmp_path / "contract.pageindex")
    loaded = load_index(target)
    assert [page.origin for page in loaded.pages] == [
        page.origin for page in build_index(scan, abstract=False).pages
    ]
    out = tmp_path / "inspect.txt"
    with out.open("w") as handle:
        stats = inspect(target, file=handle, show_toc=False)
    assert stats["text_sources"] == {"ocr": 2, "text_layer": 1}
    assert stats["ocr_pages"] == [1, 3]
    assert "Text:     2 OCR (tesseract (eng); pages 1, 3), 1 text layer" in out.read_text()


def test_an_index_of_format_1_1_gets_the_origins_it_can_tell(scan: Path, tmp_path: Path) -> None:
    target = save_index(build_index(scan, ocr="never", strategy="text"), tmp_path / "old.pageindex")
    data = json.loads((target / "document.json").read_text())
    data["format_version"] = "1.1"
    for page in data["pages"]:
        page.pop("origin")
    (target / "document.json").write_text(json.dumps(data))
    assert {page.origin.source for page in load_index(target).pages if page.origin} == {"text_layer"}
    data["usage"] = {"calls": 3, "input_tokens": 10, "output_tokens": 10}
    (target / "document.json").write_text(json.dumps(data))
    assert [page.origin for page in load_index(target).pages] == [None, None, None]


def test_ocr_settings_are_in_the_cache_key_and_the_worker_count_is_not() -> None:
    data = b"%PDF-1.7 the same bytes"
    base = cache_key(data, "pdf", {})
    assert cache_key(data, "pdf", {"ocr": "auto", "ocr_engine": "tesseract"}) == base  # the defaults
    assert cache_key(data, "pdf", {"ocr_workers": 7}) == base
    assert cache_key(data, "pdf", {"ocr": "never"}) != base
    assert cache_key(data, "pdf", {"ocr_languages": "eng+deu"}) != base
    assert cache_key(data, "pdf", {"ocr_engine": "rapidocr"}) != base
    assert options_key({"ocr": "always"}, "pdf") != options_key({}, "pdf")


# -- the command line -----------------------------------------------------------------------------------


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "extract_thinker_pageindex", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def test_index_search_inspect_and_view_of_a_scan_work_without_a_model(scan: Path, tmp_path: Path) -> None:
    target = tmp_path / "contract-scan.pageindex"
    done = run_cli("index", str(scan), "-o", str(target), "--ocr-workers", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "3 page(s)" in done.stdout
    found = run_cli("search", str(scan), "-q", "confidential information secret", "-n", "1", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert found.stdout.lstrip().startswith("page    3")
    shown = run_cli("inspect", str(target), cwd=tmp_path)
    assert "2 OCR (tesseract (eng); pages 1, 3)" in shown.stdout
    page = tmp_path / "scan.view.html"
    view = run_cli("view", str(target), "-o", str(page), "--source", str(scan), cwd=tmp_path)
    assert view.returncode == 0, view.stderr
    html = page.read_text()
    assert "Termination Schedule" in html and "Confidentiality Obligations" in html


def test_the_command_line_refuses_bad_ocr_options_as_usage_errors(scan: Path, tmp_path: Path) -> None:
    for flags in (["--ocr-workers", "0"], ["--ocr-languages", "e;n"], ["--ocr", "maybe"]):
        done = run_cli("index", str(scan), *flags, cwd=tmp_path)
        assert done.returncode == 2, (flags, done.stderr)
    never = run_cli("search", str(scan), "-q", "penalty", "--ocr", "never", cwd=tmp_path)
    assert never.returncode == 1 and "No page of" in never.stdout  # the scan has no words without OCR


def test_a_worker_killed_mid_run_fails_one_page_and_a_new_worker_reads_the_rest(tmp_path: Path) -> None:
    import signal

    from extract_thinker_pageindex.ocr.pool import OcrOutcome, ocr_pages

    specs = [PageSpec([Line(f"Page number {n} of the killed worker test", 100, size=16)]) for n in range(6)]
    path = make_scan(tmp_path / "six.pdf", specs)
    data = path.read_bytes()
    outcomes: list[OcrOutcome] = []

    def done(outcome: OcrOutcome) -> None:
        outcomes.append(outcome)
        if len(outcomes) == 1:
            victims = ocr_worker_children()
            assert len(victims) == 2
            os.kill(victims[0], signal.SIGKILL)

    with pymupdf.open(path) as document:
        ocr_pages(document, data, range(6), ocr_settings(ocr_workers=2), done)
    assert sorted(outcome.index for outcome in outcomes) == list(range(6))
    failed = [outcome for outcome in outcomes if outcome.blocks is None]
    assert len(failed) == 1 and "the OCR worker stopped" in (failed[0].error or "")
    assert ocr_worker_children() == []


# -- turned pages: sizes across the text as shown, boxes by MuPDF's own bounds ----------------------------


def _turned_scan(path: Path, rotation: int, spec: PageSpec = CONTRACT[0]) -> Path:
    """A page of ``spec`` scanned, stored turned by ``rotation`` (``/Rotate``) and shown upright."""
    upright = born_digital([spec])[0]
    png = upright.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY).tobytes("png")
    reference = upright.get_pixmap(dpi=24, colorspace=pymupdf.csGRAY).samples
    width, height = (792, 612) if rotation in (90, 270) else (612, 792)
    for picture_turn in (0, 90, 180, 270):  # the picture turned so that the page shows it upright
        document = pymupdf.open()
        page = document.new_page(width=width, height=height)
        page.insert_image(page.rect, stream=png, rotate=picture_turn, keep_proportion=False)
        page.set_rotation(rotation)
        shown = page.get_pixmap(dpi=24, colorspace=pymupdf.csGRAY).samples
        if len(shown) == len(reference) and sum(
            abs(a - b) for a, b in zip(shown, reference, strict=True)
        ) < len(shown):
            document.save(path)
            return path
    raise AssertionError("no turn of the picture shows the page upright")


@pytest.mark.parametrize("rotation", [90, 270])
def test_a_scan_stored_turned_keeps_its_heading(tmp_path: Path, rotation: int) -> None:
    # The OCR'd lines come back in the page's own (turned) points, where a line's height is its length:
    # measured so, "Termination Schedule" was set at 250 pt and every body line larger than it.
    path = _turned_scan(tmp_path / f"turned-{rotation}.pdf", rotation)
    nodes = [node for node in build_index(path, strategy="text", ocr_workers=1).pages[0].nodes]
    headings = [node.content for node in nodes if node.type == "heading"]
    assert headings and "Termination" in headings[0]
    assert any(node.type == "paragraph" and "ninety days" in node.content for node in nodes)


@pytest.mark.parametrize("keys", [{"UserUnit": "2"}, {"CropBox": "[-40 -40 832 652]"}], ids=["unit", "crop"])
def test_ocr_boxes_on_a_turned_page_of_another_unit_or_crop_are_the_text_layers(
    tmp_path: Path, keys: dict[str, str]
) -> None:
    # The same page read from its text layer and by OCR: its words where they stand, either way. Unturned
    # by PyMuPDF's derotation matrix (the unscaled CropBox), OCR's boxes were off by the scale or the crop.
    document = pymupdf.open()
    page = document.new_page(width=792, height=612)
    page.insert_text(
        (72, 300), "The supplier may terminate this agreement with ninety days notice.", fontsize=14
    )
    for key, value in keys.items():
        document.xref_set_key(page.xref, key, value)
    page.set_rotation(90)
    path = tmp_path / "turned.pdf"
    document.save(path)

    def box(ocr: str) -> tuple[int, ...]:
        nodes = build_index(path, strategy="text", ocr=ocr, ocr_workers=1).pages[0].nodes
        (paragraph,) = [node for node in nodes if node.type == "paragraph"]
        assert paragraph.bbox is not None
        return paragraph.bbox

    text_layer, read = box("never"), box("always")
    assert all(abs(a - b) <= 16 for a, b in zip(text_layer, read, strict=True)), (text_layer, read)


def test_workers_that_cannot_start_are_an_ocr_error(scan: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A frozen or embedded application's sys.executable is no Python that runs the worker: the error said
    # BrokenPipeError or FileNotFoundError.
    for executable, said in (
        ("/bin/false", "stopped before it was ready"),
        ("/no/such/python", "cannot be run"),
    ):
        monkeypatch.setattr(sys, "executable", executable)
        with pytest.raises(OcrError, match=said):
            build_index(scan, strategy="text", ocr_workers=2)
    assert ocr_worker_children() == []


@pytest.mark.parametrize("rotation", [90, 180])
def test_a_ruled_table_on_a_turned_scan_keeps_its_rows(tmp_path: Path, rotation: int) -> None:
    # The grid and the words were matched in the page's own points, where a turned page's rows are its
    # columns: the table came out transposed (a quarter turn) or mirrored (a half turn).
    path = _turned_scan(tmp_path / f"table-{rotation}.pdf", rotation, RESULTS_PAGE)
    (page,) = DocumentLoaderPyMuPDF(ocr_workers=1).load(str(path))
    assert page["tables"] == [[list(row) for row in RESULTS.cells]]
    # The content in the order the page is read: title, the line above the table, the table, the line after.
    content = page["content"]
    assert content.startswith("Quarterly Results")
    assert content.index("shows revenue") < content.index("| Region |") < content.index("Costs fell")
    nodes = build_index(path, strategy="text", ocr_workers=1).pages[0].nodes
    (table,) = [node for node in nodes if node.type == "table"]
    assert table.content.splitlines()[0] == "| Region | Revenue | Costs |"


def test_a_page_ocr_fails_on_leaves_the_others_indexed_under_the_auto_strategy(tmp_path: Path) -> None:
    # No model: a page OCR fails on is warned about and kept empty, and the others are read, as under
    # strategy="text" (it raised ModelRequiredError for the whole document, saying the page had no text
    # layer). The failure is a real one: a worker killed while it reads.
    import signal

    specs = [PageSpec([Line(f"Page number {n} of the failing page test", 100, size=16)]) for n in range(6)]
    path = make_scan(tmp_path / "six.pdf", specs)
    killed: list[int] = []

    def progress(done: int, total: int) -> None:
        if not killed:
            victims = ocr_worker_children()
            if victims:
                os.kill(victims[0], signal.SIGKILL)
                killed.append(victims[0])

    with pytest.warns(PageIndexWarning, match=r"OCR failed on 1 page\(s\)"):
        document = build_index(path, ocr_workers=2, progress=progress)  # strategy="auto", no model
    assert killed
    read = [page for page in document.pages if page.origin is not None and page.origin.source == "ocr"]
    assert len(read) == 5 and len(document.pages) == 6
    assert ocr_worker_children() == []
