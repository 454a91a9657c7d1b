"""DocumentLoaderPyMuPDF on real PDFs made with PyMuPDF: page dicts, sources, selection, errors, threads."""

from __future__ import annotations

import random
import re
import warnings
from concurrent.futures import ThreadPoolExecutor
from io import BytesIO
from pathlib import Path

import pymupdf
import pytest
from extract_thinker.document_loader.document_loader import DocumentLoader
from PIL import Image

from extract_thinker_pageindex import DocumentLoaderPyMuPDF
from extract_thinker_pageindex.errors import (
    DocumentLoadError,
    EmptyDocumentError,
    PageIndexError,
    PageIndexWarning,
    PageSpecError,
)
from pdf_support import CATALOG, LEAF, raw_pdf

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
TEXTS = [f"Page {n} says word{n} and nothing else." for n in range(1, 5)]
#: What the loader does to ligatures: "deﬁnitions" is indexed and searched as "definitions".
LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"})
DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
TABLE_CELLS = [["Region", "Units", "Revenue"], ["North", "120", "4500"], ["South", "95", "3800"]]


def squash(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def four_pages(make_pdf) -> Path:
    return make_pdf(TEXTS)


def letter_pdf(path: Path, texts: list[str]) -> Path:
    """A PDF of US Letter pages (612 x 792 pt), one per text."""
    document = pymupdf.open()
    for text in texts:
        page = document.new_page(width=612, height=792)
        page.insert_textbox(pymupdf.Rect(72, 72, 540, 720), text, fontsize=11)
    document.save(path)
    document.close()
    return path


def table_pdf(path: Path) -> Path:
    """One page: a line of text, a ruled 3 x 3 table drawn with lines, a line of text."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    page.insert_text((72, 80), "Quarterly summary before the table", fontsize=11)
    left, top, width, height = 72, 120, 150, 30
    for i in range(4):
        page.draw_line((left, top + i * height), (left + 3 * width, top + i * height))
        page.draw_line((left + i * width, top), (left + i * width, top + 3 * height))
    for row, cells in enumerate(TABLE_CELLS):
        for column, text in enumerate(cells):
            page.insert_text((left + column * width + 5, top + row * height + 20), text, fontsize=11)
    page.insert_text((72, 260), "Closing remarks after the table", fontsize=11)
    document.save(path)
    document.close()
    return path


# -- the framework protocol --------------------------------------------------------------------------


def test_is_a_framework_loader():
    loader = DocumentLoaderPyMuPDF()
    assert isinstance(loader, DocumentLoader)
    assert loader.SUPPORTED_FORMATS == ["pdf"]
    assert loader.vision_mode is False


def test_one_dict_per_page_in_order(four_pages: Path):
    pages = DocumentLoaderPyMuPDF().load(str(four_pages))
    assert len(pages) == 4
    for number, (page, text) in enumerate(zip(pages, TEXTS, strict=True), start=1):
        assert set(page) == {"content", "markdown", "tables", "page_number", "text_source"}
        assert page["page_number"] == number
        assert page["text_source"] == "text_layer"
        assert squash(page["content"]) == text
        assert page["markdown"] == page["content"]
        assert page["tables"] == []
        assert "image" not in page


def test_vision_mode_adds_png_images_at_the_dpi(tmp_path: Path):
    path = letter_pdf(tmp_path / "letter.pdf", ["first", "second"])
    for dpi, size in [(72, (612, 792)), (144, (1224, 1584))]:
        loader = DocumentLoaderPyMuPDF(dpi=dpi)
        loader.set_vision_mode(True)
        pages = loader.load(str(path))
        assert len(pages) == 2
        for page in pages:
            assert page["image"][:8] == PNG_SIGNATURE
            with Image.open(BytesIO(page["image"])) as image:
                assert image.format == "PNG"
                assert image.size == size
        assert pages[0]["image"] != pages[1]["image"]  # each page is its own rendering
        assert squash(pages[1]["content"]) == "second"


def test_vision_mode_off_again_drops_images(four_pages: Path):
    loader = DocumentLoaderPyMuPDF(dpi=20)
    loader.set_vision_mode(True)
    assert all("image" in page for page in loader.load(str(four_pages)))
    loader.set_vision_mode(False)
    assert all("image" not in page for page in loader.load(str(four_pages)))


def test_default_dpi_is_150(tmp_path: Path):
    path = letter_pdf(tmp_path / "letter.pdf", ["only"])
    loader = DocumentLoaderPyMuPDF()
    loader.set_vision_mode(True)
    with Image.open(BytesIO(loader.load(str(path))[0]["image"])) as image:
        assert image.size == (1275, 1650)


# -- sources -----------------------------------------------------------------------------------------


def test_str_path_pathlib_bytes_and_bytesio_agree(four_pages: Path):
    loader = DocumentLoaderPyMuPDF()
    expected = loader.load(str(four_pages))
    data = four_pages.read_bytes()
    assert loader.load(four_pages) == expected
    assert loader.load(BytesIO(data)) == expected
    assert loader.load(data) == expected


def test_bytesio_read_to_the_end_still_loads(four_pages: Path):
    stream = BytesIO(four_pages.read_bytes())
    stream.read()
    pages = DocumentLoaderPyMuPDF().load(stream)
    assert [squash(page["content"]) for page in pages] == TEXTS


@pytest.mark.parametrize(
    ("selection", "numbers"),
    [
        ("2-3", [2, 3]),
        ([1, 3], [1, 3]),
        ((2, 2), [2]),
        (4, [4]),
        ([(1, 2), 4], [1, 2, 4]),
        ("1-4", [1, 2, 3, 4]),
    ],
)
def test_page_selection_keeps_original_page_numbers(four_pages: Path, selection, numbers):
    pages = DocumentLoaderPyMuPDF(pages=selection).load(str(four_pages))
    assert [page["page_number"] for page in pages] == numbers
    assert [squash(page["content"]) for page in pages] == [TEXTS[n - 1] for n in numbers]


def test_page_selection_renders_only_selected_pages(four_pages: Path):
    loader = DocumentLoaderPyMuPDF(pages=[3], dpi=20)
    loader.set_vision_mode(True)
    pages = loader.load(BytesIO(four_pages.read_bytes()))
    assert [page["page_number"] for page in pages] == [3]
    assert pages[0]["image"][:8] == PNG_SIGNATURE


@pytest.mark.parametrize("selection", [5, "3-5", [1, 9], (4, 5), 0, "0", (3, 2), "x"])
def test_bad_page_selection_raises_page_spec_error(four_pages: Path, selection):
    with pytest.raises(PageSpecError) as info:
        DocumentLoaderPyMuPDF(pages=selection).load(str(four_pages))
    assert isinstance(info.value, ValueError)


# -- encrypted files ---------------------------------------------------------------------------------


@pytest.fixture
def encrypted(make_pdf) -> Path:
    return make_pdf(
        ["classified wording"],
        name="locked.pdf",
        encryption=pymupdf.PDF_ENCRYPT_AES_256,
        user_pw="pw",
        owner_pw="own",
    )


def test_encrypted_without_password_asks_for_it(encrypted: Path):
    with pytest.raises(DocumentLoadError) as info:
        DocumentLoaderPyMuPDF().load(str(encrypted))
    assert "password=" in str(info.value)
    assert "locked.pdf" in str(info.value)


def test_encrypted_with_wrong_password_fails(encrypted: Path):
    with pytest.raises(DocumentLoadError) as info:
        DocumentLoaderPyMuPDF(password="wrong").load(str(encrypted))
    assert "password" in str(info.value)


@pytest.mark.parametrize("password", ["pw", "own"])
def test_encrypted_with_right_password_loads(encrypted: Path, password):
    pages = DocumentLoaderPyMuPDF(password=password).load(BytesIO(encrypted.read_bytes()))
    assert squash(pages[0]["content"]) == "classified wording"


# -- broken input: always an error from the project tree ---------------------------------------------


def test_missing_file(tmp_path: Path):
    with pytest.raises(DocumentLoadError) as info:
        DocumentLoaderPyMuPDF().load(str(tmp_path / "absent.pdf"))
    assert "absent.pdf" in str(info.value)


def test_directory_is_not_a_pdf(tmp_path: Path):
    with pytest.raises(DocumentLoadError):
        DocumentLoaderPyMuPDF().load(str(tmp_path))


def test_zero_byte_file(tmp_path: Path):
    path = tmp_path / "empty.pdf"
    path.write_bytes(b"")
    with pytest.raises(EmptyDocumentError) as info:
        DocumentLoaderPyMuPDF().load(str(path))
    assert isinstance(info.value, DocumentLoadError)
    with pytest.raises(EmptyDocumentError):
        DocumentLoaderPyMuPDF().load(BytesIO(b""))


def test_pdf_without_pages():
    data = raw_pdf([CATALOG, "<< /Type /Pages /Kids [] /Count 0 >>"])
    with pytest.raises(EmptyDocumentError):
        DocumentLoaderPyMuPDF().load(data)


@pytest.mark.parametrize(
    "data",
    [
        b"hello, this is plain text",
        b"%PDF-1.7\nnothing else",
        b"\x00" * 512,
        PNG_SIGNATURE + b"\x00" * 64,
        b"<html><body><p>An HTML page, not a PDF</p></body></html>",
        "png",
        "jpeg",
    ],
    ids=["text", "header-only", "zeros", "png-signature", "html", "real-png", "real-jpeg"],
)
def test_non_pdf_bytes_with_pdf_name(tmp_path: Path, data):
    if isinstance(data, str):  # a real image, written by Pillow
        buffer = BytesIO()
        Image.new("RGB", (40, 30), "white").save(buffer, data.upper())
        data = buffer.getvalue()
    path = tmp_path / "fake.pdf"
    path.write_bytes(data)
    with pytest.raises(DocumentLoadError) as info:
        DocumentLoaderPyMuPDF().load(str(path))
    assert "fake.pdf" in str(info.value)


def test_unsupported_source_type():
    with pytest.raises(DocumentLoadError):
        DocumentLoaderPyMuPDF().load(12345)  # type: ignore[arg-type]


def test_truncated_pdf_is_not_silently_half_read(tmp_path: Path):
    # A six-page PDF cut in half: MuPDF "repairs" it and pages 4-6 come back with no text at all. The
    # loader promises DocumentLoadError for corrupt files; at the least it must say something (a warning).
    whole = letter_pdf(tmp_path / "whole.pdf", [f"Page {n} text " * 40 for n in range(1, 7)])
    data = whole.read_bytes()
    path = tmp_path / "truncated.pdf"
    path.write_bytes(data[: len(data) // 2])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            pages = DocumentLoaderPyMuPDF().load(str(path))
        except DocumentLoadError:
            return
    assert any(issubclass(w.category, PageIndexWarning) for w in caught), (
        f"no error and no warning; {sum(not p['content'].strip() for p in pages)} of {len(pages)} "
        "pages came back empty"
    )


@pytest.mark.parametrize(
    "objects",
    [
        # The page tree's kid points back at its parent.
        [CATALOG, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", "<< /Type /Pages /Kids [2 0 R] /Count 1 >>"],
        # /Count says three pages, the tree holds one.
        [CATALOG, "<< /Type /Pages /Kids [3 0 R] /Count 3 >>", LEAF],
        # A negative page count.
        [CATALOG, "<< /Type /Pages /Kids [3 0 R] /Count -1 >>", LEAF],
    ],
    ids=["cycle", "count-too-high", "count-negative"],
)
@pytest.mark.parametrize("as_path", [False, True], ids=["bytes", "path"])
def test_malformed_page_tree_raises_document_load_error(tmp_path: Path, objects, as_path):
    data = raw_pdf(objects)
    source: object = data
    if as_path:
        source = tmp_path / "malformed.pdf"
        source.write_bytes(data)
    with pytest.raises(DocumentLoadError):
        DocumentLoaderPyMuPDF().load(source)  # type: ignore[arg-type]


def test_well_formed_hand_written_pdf_loads():
    # The control for the malformed cases above: the same writer with a sound page tree.
    pages = DocumentLoaderPyMuPDF().load(
        raw_pdf([CATALOG, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", LEAF])
    )
    assert [page["page_number"] for page in pages] == [1]
    assert pages[0]["content"] == ""


def test_damaged_bytes_only_ever_raise_project_errors(four_pages: Path):
    data = four_pages.read_bytes()
    rng = random.Random(0)
    raw: list[str] = []
    for trial in range(120):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 20)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        if rng.random() < 0.3:
            damaged = damaged[: rng.randrange(len(damaged))]
        # A page damaged out of its text is OCR'd (seconds a page): one trial in eight takes that path.
        ocr = "auto" if trial % 8 == 0 else "never"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PageIndexWarning)  # "repaired": a documented outcome
                DocumentLoaderPyMuPDF(ocr=ocr).load(BytesIO(bytes(damaged)))
        except PageIndexError:
            pass
        except Exception as exc:  # what this test is about: nothing else may escape
            raw.append(f"trial {trial}: {type(exc).__module__}.{type(exc).__name__}: {exc}")
    assert raw == []


# -- tables ------------------------------------------------------------------------------------------


def test_tables_found_and_rendered_as_markdown(tmp_path: Path):
    path = table_pdf(tmp_path / "table.pdf")
    (page,) = DocumentLoaderPyMuPDF().load(str(path))  # tables are found by default
    assert len(page["tables"]) == 1
    assert page["tables"][0] == TABLE_CELLS  # every cell as printed, none empty, none invented
    content = page["content"]
    lines = content.splitlines()
    for cells in TABLE_CELLS:
        assert "| " + " | ".join(cells) + " |" in lines, (cells, content)
    assert any(re.fullmatch(r"\|(?:-{3,}\|)+", line.strip()) for line in lines)
    # The table replaces the loose cell text in place, between the text above and below it.
    assert content.count("Revenue") == 1
    assert content.index("Quarterly summary") < content.index("|") < content.index("Closing remarks")
    assert page["markdown"] == content


def test_tables_off_on_request(tmp_path: Path):
    path = table_pdf(tmp_path / "table.pdf")
    (page,) = DocumentLoaderPyMuPDF(tables=False).load(str(path))
    assert page["tables"] == []
    assert "|" not in page["content"]
    for cells in TABLE_CELLS:
        for cell in cells:
            assert cell in page["content"]


def test_tables_on_a_page_without_a_table(four_pages: Path):
    pages = DocumentLoaderPyMuPDF(tables=True).load(str(four_pages))
    assert [page["tables"] for page in pages] == [[], [], [], []]
    assert [squash(page["content"]) for page in pages] == TEXTS


@pytest.mark.parametrize("tables", [False, True])
def test_ligatures_become_letters(tmp_path: Path, tables):
    if not DEJAVU.is_file():
        pytest.skip("needs a TrueType font with ligature glyphs (DejaVu Sans)")
    path = table_pdf(tmp_path / "ligatures.pdf")
    with pymupdf.open(path) as document:
        document[0].insert_text((72, 300), "the deﬁnitions ﬂow", fontname="dejavu", fontfile=str(DEJAVU))
        document.saveIncr()
    with pymupdf.open(path) as document:
        assert "deﬁnitions" in document[0].get_text()  # the PDF really holds the ligature
    (page,) = DocumentLoaderPyMuPDF(tables=tables).load(str(path))
    assert "the definitions flow" in page["content"]
    assert "ﬁ" not in page["content"]
    assert bool(page["tables"]) is tables


# -- can_handle --------------------------------------------------------------------------------------


def test_can_handle(four_pages: Path, tmp_path: Path):
    text_file = tmp_path / "notes.txt"
    text_file.write_text("plain text")
    loader = DocumentLoaderPyMuPDF()
    assert loader.can_handle(str(four_pages)) is True
    assert loader.can_handle(str(text_file)) is False
    assert loader.can_handle_vision(str(four_pages)) is True
    assert loader.can_handle_vision(str(text_file)) is False


def test_can_handle_names_a_missing_pdf(tmp_path: Path):
    # Answering False would leave ExtractThinker's Extractor saying "No suitable document loader found".
    loader = DocumentLoaderPyMuPDF()
    absent = tmp_path / "absent.pdf"
    for source in (str(absent), absent):
        with pytest.raises(DocumentLoadError, match=re.escape(f"No such file: {str(absent)!r}.")):
            loader.can_handle(source)
        with pytest.raises(DocumentLoadError, match="No such file"):
            loader.can_handle_vision(source)
    folder = tmp_path / "folder.pdf"
    folder.mkdir()
    with pytest.raises(DocumentLoadError, match="is a folder, not a document"):
        loader.can_handle(str(folder))
    # A missing file of a kind this loader does not read is not its business, nor is a URL.
    assert loader.can_handle(str(tmp_path / "absent.txt")) is False
    assert loader.can_handle("https://example.com/absent.pdf") is False


def test_can_handle_a_pdf_stream(four_pages: Path):
    loader = DocumentLoaderPyMuPDF()
    assert loader.can_handle(BytesIO(four_pages.read_bytes())) is True
    assert loader.can_handle(BytesIO(b"just some text, not a pdf")) is False


# -- threads -----------------------------------------------------------------------------------------


def test_loading_from_threads_matches_serial(tmp_path: Path, make_pdf):
    documents = [
        make_pdf([f"doc {d} page {p} " * 30 for p in range(d + 1)], name=f"d{d}.pdf") for d in range(2)
    ]
    documents.append(table_pdf(tmp_path / "table.pdf"))

    def load(path: Path) -> list[dict]:
        loader = DocumentLoaderPyMuPDF(tables=True, dpi=30)
        loader.set_vision_mode(True)
        return loader.load(str(path))

    serial = [load(path) for path in documents]
    assert serial[-1][0]["tables"]  # the table document exercises the table finder
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(load, documents * 2))
    assert parallel == serial * 2

    shared = DocumentLoaderPyMuPDF(dpi=30)  # one loader instance used by every thread
    shared.set_vision_mode(True)
    expected = [shared.load(str(path)) for path in documents]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(shared.load, [str(path) for path in documents] * 4))
    assert results == expected * 4


# -- the evaluation data -----------------------------------------------------------------------------


@pytest.mark.eval
def test_adobe_10k_matches_raw_pymupdf(eval_dir: Path):
    path = eval_dir / "pdfs" / "ADOBE_2015_10K.pdf"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    pages = DocumentLoaderPyMuPDF(tables=False).load(str(path))
    assert len(pages) == 116
    assert [page["page_number"] for page in pages] == list(range(1, 117))
    with pymupdf.open(path) as document:
        for number in (1, 2, 40, 77, 116):
            assert pages[number - 1]["content"] == document[number - 1].get_text().translate(LIGATURES)
        # With tables (the default), a page without one is still PyMuPDF's text as it stands.
        (plain,) = DocumentLoaderPyMuPDF(pages=1).load(str(path))
        assert plain["tables"] == [] and plain["content"] == pages[0]["content"]
    assert sum(len(page["content"]) for page in pages) > 100_000
    selected = DocumentLoaderPyMuPDF(pages="50-52", tables=False).load(BytesIO(path.read_bytes()))
    assert [page["page_number"] for page in selected] == [50, 51, 52]
    assert [page["content"] for page in selected] == [page["content"] for page in pages[49:52]]
