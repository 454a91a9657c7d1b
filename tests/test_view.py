"""The HTML view, opened in a real headless Chromium: pages, boxes where PyMuPDF puts the words, TOC links,
the query's matches and words, no network request; and the ``view`` command."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from extract_thinker_pageindex import (
    DocumentLoadError,
    IndexFormatError,
    InvalidOptionError,
    OutputExistsError,
    build_index,
    index_document,
    load_index,
    view_index,
)
from extract_thinker_pageindex.cli import main
from extract_thinker_pageindex.view import default_view_path, images_folder
from pdf_support import shift_page

SAMPLE_PDF = Path(__file__).resolve().parents[1] / "examples" / "data" / "service-agreement.pdf"
SAMPLE_MD = SAMPLE_PDF.with_suffix(".md")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
QUERY = "termination notice"

# Each drawn box of a page, relative to the page's picture, and the picture's size (CSS pixels).
PAGE_GEOMETRY = """(number) => {
  window.pageIndexView.build(number);
  const section = document.getElementById("page-" + number);
  section.scrollIntoView();
  const picture = section.querySelector("img").getBoundingClientRect();
  const rect = (element) => {
    const r = element.getBoundingClientRect();
    return [r.left - picture.left, r.top - picture.top, r.right - picture.left, r.bottom - picture.top];
  };
  return {
    width: picture.width,
    height: picture.height,
    boxes: Array.from(section.querySelectorAll(".box")).map((box) => ({j: Number(box.dataset.j),
      type: box.className.split(" ").find((name) => name.startsWith("t-")).slice(2), rect: rect(box)})),
    hits: Array.from(section.querySelectorAll(".hit")).map(rect),
  };
}"""


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled contract PDF and its page index, in a folder of their own."""
    folder = tmp_path_factory.mktemp("sample")
    shutil.copy(SAMPLE_PDF, folder / SAMPLE_PDF.name)
    index_document(folder / SAMPLE_PDF.name)
    return folder / "service-agreement.pageindex"


@pytest.fixture(scope="module")
def sample_view(sample: Path) -> Path:
    return view_index(sample, query=QUERY)


@contextmanager
def opened(browser: Any, html: Path, **options: Any) -> Iterator[Any]:
    """A browser tab showing ``html``; fails the test on any script error."""
    context = browser.new_context(viewport={"width": 1400, "height": 900}, **options)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(html.as_uri())
    page.wait_for_load_state("load")
    try:
        yield page
    finally:
        context.close()
    assert errors == []


def _inside(inner: list[float], outer: list[float], slack: float) -> bool:
    return (
        inner[0] >= outer[0] - slack
        and inner[1] >= outer[1] - slack
        and inner[2] <= outer[2] + slack
        and inner[3] <= outer[3] + slack
    )


def _shown(rect: Any, pdf_page: pymupdf.Page, geometry: dict[str, Any]) -> list[float]:
    """A rectangle in the page's own coordinates as CSS pixels on the drawn picture (PyMuPDF's own
    rotation of the page, then the picture's scale)."""
    shown = pymupdf.Rect(rect) * pdf_page.rotation_matrix
    sx = geometry["width"] / pdf_page.rect.width
    sy = geometry["height"] / pdf_page.rect.height
    return [shown.x0 * sx, shown.y0 * sy, shown.x1 * sx, shown.y1 * sy]


def check_paragraph_boxes(page: Any, pdf: pymupdf.Document, document: Any, page_index: int) -> int:
    """For each paragraph whose text is one PyMuPDF block: every word of the block lies in the paragraph's
    drawn box, and the box drawn is the node's own box, scaled to the picture. Returns how many paragraphs
    were checked."""
    geometry = page.evaluate(PAGE_GEOMETRY, page_index + 1)
    pdf_page = pdf[page_index]
    blocks: dict[int, list[tuple]] = {}
    for word in pdf_page.get_text("words"):
        blocks.setdefault(word[5], []).append(word)
    by_text = {" ".join(word[4] for word in words): words for words in blocks.values()}
    nodes = next(item for item in document.pages if item.index == page_index).nodes
    drawn = [node for node in nodes if node.type != "section"]
    boxes = {box["j"]: box for box in geometry["boxes"]}
    assert len(boxes) == sum(getattr(node, "bbox", None) is not None for node in drawn)
    checked = 0
    for j, node in enumerate(drawn):
        words = by_text.get(" ".join(getattr(node, "content", "").split()))
        if node.type != "paragraph" or words is None:
            continue
        box = boxes[j]
        assert box["type"] == "paragraph"
        shown = [_shown(word[:4], pdf_page, geometry) for word in words]
        for word_rect in shown:
            assert _inside(word_rect, box["rect"], slack=1.0), (node.content, word_rect, box["rect"])
        # The box drawn is the node's own box, scaled: within a pixel of drawing.
        expected = _shown(node.bbox, pdf_page, geometry)
        assert all(abs(a - b) <= 1.5 for a, b in zip(box["rect"], expected, strict=True)), node.content
        checked += 1
    return checked


# -- the bundled sample in a browser ------------------------------------------------------------------


def test_sample_view_shows_pages_boxes_toc_and_matches(
    browser: Any, sample: Path, sample_view: Path, tmp_path: Path
) -> None:
    document = load_index(sample)
    assert sample_view == sample.parent / "service-agreement.view.html"
    with opened(browser, sample_view) as page, pymupdf.open(sample.parent / SAMPLE_PDF.name) as pdf:
        # Every page, each a lazily loaded picture with its size set, drawn from the files beside the HTML.
        assert page.locator("section.page").count() == len(document.pages) == 4
        pictures = page.locator("section.page img")
        assert pictures.count() == 4
        for number in range(4):
            picture = pictures.nth(number)
            assert picture.get_attribute("loading") == "lazy"
            assert int(picture.get_attribute("width") or 0) > 500
            assert int(picture.get_attribute("height") or 0) > 600
            assert picture.get_attribute("src") == f"service-agreement.view_files/page-{number + 1:04d}.jpg"

        # Boxes where PyMuPDF finds the words, on every page.
        checked = sum(check_paragraph_boxes(page, pdf, document, index) for index in range(4))
        assert checked >= 8  # the fee schedule on page 3 is a table, not paragraphs
        assert page.locator(".box.t-heading").count() == document.node_counts()["heading"]
        legend = page.locator("#legend input[data-type]")
        assert {legend.nth(i).get_attribute("data-type") for i in range(legend.count())} == {
            "heading",
            "paragraph",
            "list_item",
            "table",  # the fee schedule
        }

        # Each TOC entry points at its page; a click brings its heading's box into view.
        links = page.locator("#toc a.toc-link")
        assert links.count() == len(document.toc) == 15
        for entry, i in zip(document.toc, range(links.count()), strict=True):
            assert links.nth(i).get_attribute("href") == f"#page-{entry.target_page + 1}"
        entry = next(entry for entry in document.toc if entry.title.startswith("4.1"))
        page.evaluate("window.scrollTo(0, 0)")
        page.locator("#toc a.toc-link", has_text="4.1 Termination for convenience").click()
        target = page.locator("#page-3 #toc-target")
        assert target.count() == 1
        shown = target.bounding_box()
        assert shown is not None and shown["y"] >= 0 and shown["y"] + shown["height"] <= 900
        assert page.evaluate("location.hash") == "#page-3"
        geometry = page.evaluate(PAGE_GEOMETRY, 3)
        heading = next(
            box
            for box in geometry["boxes"]
            if box["type"] == "heading" and box["j"] == _node_position(document, entry)
        )
        target_rect = page.evaluate(
            """() => { const p = document.querySelector("#page-3 img").getBoundingClientRect();
                       const r = document.getElementById("toc-target").getBoundingClientRect();
                       return [r.left - p.left, r.top - p.top, r.right - p.left, r.bottom - p.top]; }"""
        )
        assert all(abs(a - b) <= 1 for a, b in zip(target_rect, heading["rect"], strict=True))

        # The query: its matches listed with scores, their pages badged, its words marked where PyMuPDF
        # finds them.
        matches = page.locator("#matches li.match")
        assert matches.count() >= 2
        assert matches.nth(0).locator("a").get_attribute("href") == "#page-3"
        assert "score -" in matches.nth(0).inner_text()
        assert page.locator("#matches mark").count() >= 2
        assert page.locator("#page-3 .badge").inner_text().startswith("match 1")
        hits = page.evaluate(PAGE_GEOMETRY, 3)["hits"]
        found = pdf[2].search_for("termination")
        assert len(found) >= 3 and len(hits) >= len(found)
        for rect in found:
            assert any(_inside(_shown(rect, pdf[2], geometry), hit, slack=1.5) for hit in hits)
        assert page.locator("#page-1 .hit").count() == 0  # page 1 is no match

        # A click on a box shows its type and text, the query's words marked.
        page.locator("#page-3 .box.t-paragraph").first.click()
        details = page.locator("#details")
        assert details.is_visible()
        assert details.locator(".kind").inner_text().startswith("paragraph · page 3")
        page.evaluate("""() => document.querySelectorAll("#page-3 .box.t-paragraph").forEach((box) => {
            if (box.title.includes("written notice")) box.click(); })""")
        assert "notice" in details.locator(".text").inner_text()
        assert details.locator("mark").count() >= 1

        # Hiding a type in the legend hides its boxes.
        page.locator("#legend input[data-type=paragraph]").uncheck()
        assert page.locator("#page-3 .box.t-paragraph").first.is_hidden()
        page.locator("#legend input[data-type=paragraph]").check()

        shot = tmp_path / "view.png"
        page.screenshot(path=str(shot))
    data = shot.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 10_000


def _node_position(document: Any, entry: Any) -> int:
    """The position, among the drawn nodes of its page (sections left out), of a TOC entry's heading."""
    page = next(page for page in document.pages if page.index == entry.target_page)
    drawn = [node for node in page.nodes if node.type != "section"]
    return next(
        j
        for j, node in enumerate(drawn)
        if node.type == "heading" and node.parent_id == entry.target_section_id
    )


@pytest.mark.parametrize("embed_images", [False, True])
def test_view_makes_no_network_request(
    browser: Any, sample: Path, tmp_path: Path, embed_images: bool
) -> None:
    html = view_index(sample, output=tmp_path / "out.html", query=QUERY, embed_images=embed_images)
    assert images_folder(html).is_dir() is not embed_images
    requested: list[str] = []

    def handle(route: Any) -> None:
        url = route.request.url
        requested.append(url)
        if url.startswith(("file:", "data:")):
            route.continue_()
        else:
            route.abort()

    # The page's Content-Security-Policy would block a request before the route saw it: bypassed here, so
    # that the markup and script themselves are shown to ask for nothing.
    assert "default-src 'none'" in html.read_text(encoding="utf-8")
    with opened(browser, html, bypass_csp=True) as page:
        page.route("**/*", handle)
        page.reload()
        page.wait_for_load_state("load")
        page.evaluate("""async () => {
            for (const section of document.querySelectorAll("section.page")) {
                section.scrollIntoView();
                await new Promise((resolve) => setTimeout(resolve, 30));
            }}""")
        page.wait_for_function("Array.from(document.images).every((image) => image.complete)")
        loaded = page.evaluate("Array.from(document.images).map((image) => image.naturalWidth)")
    assert requested, "the route handler saw no request"
    base = tmp_path.as_uri()
    for url in requested:
        assert url.startswith(f"{base}/") or url.startswith("data:"), url
    assert len(loaded) == 4 and all(width > 500 for width in loaded)
    pictures = [url for url in requested if url.endswith(".jpg")]
    assert len(pictures) == (0 if embed_images else 4)


def test_hostile_text_stays_text(browser: Any, tmp_path: Path) -> None:
    source = tmp_path / "hostile.md"
    source.write_text(
        "# Title </script><script>window.owned = 1</script>\n\n"
        'A paragraph <img src=x onerror="window.owned = 2"> and </SCRIPT><!-- & more.\n\n'
        "- an item with a query word: tariff\n",
        encoding="utf-8",
    )
    index_document(source)
    html = view_index(tmp_path / "hostile.pageindex", query="tariff")
    with opened(browser, html) as page:
        assert page.evaluate("window.owned") is None
        assert page.locator("img").count() == 0
        assert page.locator("script").count() == 2
        blocks = page.locator(".sheet.text .block")
        assert blocks.count() == 3
        assert "</script><script>window.owned = 1</script>" in blocks.nth(0).inner_text()
        assert '<img src=x onerror="window.owned = 2">' in blocks.nth(1).inner_text()
        assert page.locator(".sheet.text mark").inner_text() == "tariff"
        blocks.nth(1).click()
        assert "</SCRIPT><!-- & more." in page.locator("#details .text").inner_text()
        title = page.locator("#toc").inner_text()
        assert "</script>" in title


def _embedded_data(html: Path) -> str:
    text = html.read_text(encoding="utf-8")
    return text.split('<script type="application/json" id="pageindex-data">', 1)[1].split("</script>", 1)[0]


def test_the_embedded_data_written_node_by_node_is_one_json_document(
    sample: Path, sample_view: Path, tmp_path: Path
) -> None:
    """The nodes' data is written node by node: together it is exactly the compact JSON of the whole, with
    every page and node in order, the query's words on the matched pages, and no ``<``, ``>`` or ``&``."""
    from extract_thinker_pageindex.view.html import json_for_script

    source = tmp_path / "hostile.md"
    source.write_text(
        "# Fees & </script> — “due” 😀\n\nNet <b>30</b> days & more.\n\n# Notes\n\n- [1] é ü ∑\n",
        encoding="utf-8",
    )
    index_document(source)
    hostile = tmp_path / "hostile.pageindex"
    for index, html in ((sample, sample_view), (hostile, view_index(hostile))):
        raw = _embedded_data(html)
        assert not {"<", ">", "&"} & set(raw)
        data = json.loads(raw)
        assert json_for_script(data) == raw
        document = load_index(index)
        assert [page["n"] for page in data["pages"]] == [page.index + 1 for page in document.pages]
        for shown, page in zip(data["pages"], document.pages, strict=True):
            nodes = [node for node in page.nodes if node.type != "section"]
            assert [node["id"] for node in shown["nodes"]] == [node.id for node in nodes]
            assert [node["x"] for node in shown["nodes"]] == [str(node.content) for node in nodes]
    assert any("h" in page for page in json.loads(_embedded_data(sample_view))["pages"])


@pytest.mark.parametrize("change", ["rotate", "crop"])
def test_boxes_follow_rotated_and_cropped_pages(browser: Any, tmp_path: Path, change: str) -> None:
    from pdf_support import prose

    pdf = pymupdf.open()
    page = pdf.new_page()
    y = 150.0
    for number in range(3):
        text = prose(number * 5, 5)
        rect = pymupdf.Rect(90, y, 500, y + 120)
        page.insert_textbox(rect, text, fontsize=10, fontname="tiro")
        y += 140
    shift_page(page, change)
    path = tmp_path / f"{change}.pdf"
    pdf.save(path)
    pdf.close()
    document = build_index(path, strategy="text")
    from extract_thinker_pageindex import save_index

    save_index(document, tmp_path / f"{change}.pageindex")
    html = view_index(tmp_path / f"{change}.pageindex")
    with opened(browser, html) as tab, pymupdf.open(path) as source:
        picture = tab.locator("img").first
        width, height = int(picture.get_attribute("width") or 0), int(picture.get_attribute("height") or 0)
        assert (width > height) is (change == "rotate")
        assert check_paragraph_boxes(tab, source, document, 0) >= 2


# -- a FinanceBench filing --------------------------------------------------------------------------


@pytest.mark.eval
def test_a_filing_view_opens_at_once_and_draws_boxes_lazily(
    browser: Any, eval_dir: Path, tmp_path: Path
) -> None:
    source = eval_dir / "pdfs" / "MICROSOFT_2023_10K.pdf"
    index = tmp_path / "filing.pageindex"
    index_document(source, output=index, strategy="text")
    document = load_index(index)
    html = view_index(index, source=source, query="total revenue", dpi=48)
    placed = sum(getattr(node, "bbox", None) is not None for _, node in document.iter_nodes())
    assert len(document.pages) == 116 and placed > 1500
    with opened(browser, html) as page, pymupdf.open(source) as pdf:
        assert page.locator("section.page").count() == 116
        assert page.locator("img[loading=lazy][width][height]").count() == 116
        # Only the pages near the screen have their boxes yet (drawn as they come into view: waited for,
        # since a loaded machine draws them later).
        page.locator(".box").first.wait_for()
        assert 0 < page.locator(".box").count() < placed / 10
        first = page.locator("#matches li.match a").first
        number = int(first.get_attribute("data-goto") or "0")
        first.click()
        page.locator(f"#page-{number} .hit").nth(1).wait_for()
        assert page.locator(f"#page-{number} .hit").count() >= 2
        assert page.locator(f"#page-{number}").bounding_box()["y"] < 900
        assert check_paragraph_boxes(page, pdf, document, number - 1) >= 3
        # A TOC entry far down the document scrolls there and marks its heading.
        last = page.locator("#toc a.toc-link[data-box]").last
        target_page = int(last.get_attribute("data-goto") or "0")
        assert target_page > 60
        last.click()
        page.locator(f"#page-{target_page} #toc-target").wait_for()
        box = page.locator(f"#page-{target_page} #toc-target").bounding_box()
        assert box is not None and 0 <= box["y"] <= 900
        # Page 58 is the income statement: a table node (its box drawn with the others) and a few paragraphs.
        assert check_paragraph_boxes(page, pdf, document, 57) >= 3
        page.screenshot(path=str(tmp_path / "filing.png"))
    assert (tmp_path / "filing.png").read_bytes().startswith(PNG_SIGNATURE)


# -- the Python API and the command -------------------------------------------------------------------


def test_view_of_a_text_source_needs_no_source_file(tmp_path: Path) -> None:
    shutil.copy(SAMPLE_MD, tmp_path / SAMPLE_MD.name)
    index_document(tmp_path / SAMPLE_MD.name)
    (tmp_path / SAMPLE_MD.name).unlink()
    html = view_index(tmp_path / "service-agreement.pageindex")
    text = html.read_text(encoding="utf-8")
    assert 'class="sheet text"' in text and "<img" not in text
    assert not images_folder(html).exists()


def test_view_reports_progress_as_it_draws_each_page(sample: Path, tmp_path: Path) -> None:
    """``progress(done, total)`` comes once the index is read, then after each page's picture is written
    (counted in the view's staging folder at each call), or each page of a text source laid out."""
    drawn: list[tuple[int, int, int]] = []

    def progress(done: int, total: int) -> None:
        pictures = len(list(tmp_path.glob(".view.html.view-tmp-*/files/page-*.jpg")))
        drawn.append((done, total, pictures))

    view_index(sample, output=tmp_path / "view.html", query=QUERY, progress=progress)
    assert drawn == [(0, 4, 0), (1, 4, 1), (2, 4, 2), (3, 4, 3), (4, 4, 4)]

    shutil.copy(SAMPLE_MD, tmp_path / SAMPLE_MD.name)
    index_document(tmp_path / SAMPLE_MD.name)
    laid_out: list[tuple[int, int]] = []
    view_index(tmp_path / "service-agreement.pageindex", progress=lambda *done: laid_out.append(done))
    pages = len(load_index(tmp_path / "service-agreement.pageindex").pages)
    assert laid_out == [(done, pages) for done in range(pages + 1)]


def test_cli_view_prints_no_progress_when_standard_error_is_no_terminal(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for variable in ("FORCE_COLOR", "TTY_COMPATIBLE"):  # rich would take either as a terminal
        monkeypatch.delenv(variable, raising=False)
    assert main(["view", str(sample), "-o", str(tmp_path / "view.html"), "-q", QUERY]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.count("\n") == 1 and "view.html" in captured.out


def test_cli_view_shows_its_progress_on_a_terminal(sample: Path, tmp_path: Path) -> None:
    """On a terminal (a real pseudo-terminal), standard error shows the pages drawn with the bar ``index``
    shows; standard output still holds only the line naming the view."""
    import os
    import pty
    import subprocess
    import sys
    import threading

    leader, follower = pty.openpty()
    env = {name: value for name, value in os.environ.items() if name not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    env.update(COLUMNS="120", TERM="xterm")
    command = [sys.executable, "-m", "extract_thinker_pageindex", "view", str(sample)]
    process = subprocess.Popen(
        [*command, "-o", str(tmp_path / "view.html")], stdout=subprocess.PIPE, stderr=follower, env=env
    )
    os.close(follower)
    shown = bytearray()

    def read() -> None:  # drained as it comes, so the child never waits on a full terminal
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:  # EIO: the child closed its end
                return
            if not data:
                return
            shown.extend(data)

    reader = threading.Thread(target=read)
    reader.start()
    out, _ = process.communicate(timeout=120)
    reader.join(timeout=30)
    os.close(leader)
    assert process.returncode == 0
    assert "service-agreement.pageindex" in shown.decode() and "4/4" in shown.decode()
    assert out.decode().count("\n") == 1 and "view.html" in out.decode()


def test_view_errors(sample: Path, tmp_path: Path) -> None:
    with pytest.raises(IndexFormatError, match="No page index"):
        view_index(tmp_path / "missing.pageindex")
    moved = tmp_path / "moved.pageindex"
    shutil.copytree(sample, moved)
    with pytest.raises(DocumentLoadError, match=r"'moved\.pdf' \(named as the index folder\)"):
        view_index(moved)  # the source is looked for by the index folder's name, not the index's contents
    with pytest.raises(DocumentLoadError, match="does not exist"):
        view_index(moved, source=tmp_path / "nope.pdf")
    with pytest.raises(DocumentLoadError, match="not a regular file"):
        view_index(moved, source=tmp_path)
    other = tmp_path / "other.pdf"
    with pymupdf.open() as pdf:
        pdf.new_page()
        pdf.save(other)
    with pytest.raises(DocumentLoadError, match="1 page"):
        view_index(moved, source=other)
    with pytest.raises(InvalidOptionError, match="searchable words"):
        view_index(moved, source=SAMPLE_PDF, query="the of")
    with pytest.raises(InvalidOptionError, match="max_pages"):
        view_index(moved, source=SAMPLE_PDF, query="fees", max_pages=0)
    foreign = tmp_path / "out_files"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(OutputExistsError, match="out_files"):
        view_index(moved, source=SAMPLE_PDF, output=tmp_path / "out.html")
    assert (foreign / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert not (tmp_path / "out.html").exists()


def test_view_rewrites_its_own_output(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "nested" / "doc.html"
    view_index(sample, output=out)
    view_index(sample, output=out, query="fees")
    assert sorted(path.name for path in images_folder(out).iterdir()) == [
        ".pageindex-view",  # the view's mark: only a folder holding it is replaced
        *(f"page-{n:04d}.jpg" for n in range(1, 5)),
    ]
    assert 'id="matches"' in out.read_text(encoding="utf-8")
    assert sorted(path.name for path in out.parent.iterdir()) == ["doc.html", "doc_files"]


def test_a_file_that_is_not_a_view_is_never_written_over(
    sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "report.html"
    mine.write_text("<html><body>My own report.</body></html>", encoding="utf-8")
    with pytest.raises(OutputExistsError, match="is not a view written by this command"):
        view_index(sample, output=mine)
    assert main(["view", str(sample), "-o", str(mine)]) == 1
    assert "is not a view written by this command" in capsys.readouterr().err
    assert mine.read_text(encoding="utf-8") == "<html><body>My own report.</body></html>"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["report.html"]  # no pictures either


def test_cli_view_writes_the_default_file(
    sample: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(sample.parent)
    target = default_view_path(sample)
    target.unlink(missing_ok=True)
    assert main(["view", sample.name, "-q", "fees"]) == 0
    out = capsys.readouterr().out
    assert "service-agreement.view.html" in out and "service-agreement.view_files" in out
    assert target.is_file() and (sample.parent / "service-agreement.view_files" / "page-0001.jpg").is_file()
    assert main(["view", str(sample / "document.json")]) == 0  # the document.json names the index too
    assert default_view_path(sample / "document.json") == target


def test_cli_view_output_and_source(sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    moved = tmp_path / "moved.pageindex"
    shutil.copytree(sample, moved)
    out = tmp_path / "views" / "contract.html"
    code = main(["view", str(moved), "--source", str(SAMPLE_PDF), "-o", str(out), "--embed-images"])
    assert code == 0, capsys.readouterr().err
    assert out.is_file() and not images_folder(out).exists()
    assert out.read_text(encoding="utf-8").count('src="data:image/jpeg;base64,') == 4


def test_cli_view_errors(sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", str(tmp_path / "missing.pageindex")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("extract-thinker-pageindex: error: No page index at") and "Traceback" not in err
    moved = tmp_path / "moved.pageindex"
    shutil.copytree(sample, moved)
    assert main(["view", str(moved)]) == 1
    err = capsys.readouterr().err
    assert "'moved.pdf'" in err and "--source" in err
    assert main(["view", str(moved), "--source", str(tmp_path / "gone.pdf")]) == 1
    assert "gone.pdf" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.html"))
    assert main(["view", str(sample), "-q", "the and of"]) == 2
    assert "searchable words" in capsys.readouterr().err
    assert main(["view", str(sample), "-q", "fees", "-n", "0"]) == 2
    assert main(["view", str(sample), "--dpi", "0"]) == 2


def test_view_of_an_image_source_boxes_in_its_pixels(tmp_path: Path) -> None:
    from PIL import Image

    from extract_thinker_pageindex import Document, ImageNode, Page, save_index

    Image.new("RGB", (1200, 800), "white").save(tmp_path / "scan.png")
    node = ImageNode(id="i1", kind="chart", bbox=(300, 200, 600, 400), description="a <b>chart</b>")
    document = Document(
        name="scan", extension="png", source_page_count=1, pages=[Page(index=0, nodes=[node])]
    )
    save_index(document, tmp_path / "scan.pageindex")
    html = view_index(tmp_path / "scan.pageindex").read_text(encoding="utf-8")
    assert 'src="scan.view_files/page-0001.png" width="1200" height="800"' in html
    assert '"b":[25.0,25.0,25.0,25.0]' in html  # left, top, width, height in percent of the picture
    assert "<b>" not in html and "\\u003cb\\u003echart" in html


def test_default_view_path_is_beside_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = tmp_path / "report.pageindex"
    index.mkdir()
    assert default_view_path(index) == tmp_path / "report.view.html"
    assert default_view_path(index / "document.json") == tmp_path / "report.view.html"
    monkeypatch.chdir(index)
    assert default_view_path("document.json").resolve() == (tmp_path / "report.view.html").resolve()
    assert images_folder(tmp_path / "report.view.html") == tmp_path / "report.view_files"


def test_view_never_writes_over_its_source_or_index(sample: Path, tmp_path: Path) -> None:
    folder = tmp_path / "copy"
    shutil.copytree(sample.parent, folder, ignore=shutil.ignore_patterns("*.view*"))
    index, pdf = folder / sample.name, folder / SAMPLE_PDF.name
    before = pdf.read_bytes(), (index / "document.json").read_bytes()
    for output in (pdf, index / "document.json", index / "sub" / "view.html", folder / "link.html"):
        if output.name == "link.html":
            output.symlink_to(pdf)
        with pytest.raises(OutputExistsError):
            view_index(index, output=output)
    assert (pdf.read_bytes(), (index / "document.json").read_bytes()) == before
    assert sorted(path.name for path in index.iterdir()) == ["document.json"]
    # A Markdown source is not read by the view, but is not written over either.
    markdown = folder / "md" / SAMPLE_MD.name
    markdown.parent.mkdir()
    shutil.copy(SAMPLE_MD, markdown)
    index_document(markdown)
    with pytest.raises(OutputExistsError, match="source"):
        view_index(folder / "md" / "service-agreement.pageindex", output=markdown)
    assert markdown.read_text(encoding="utf-8") == SAMPLE_MD.read_text(encoding="utf-8")


def test_a_failed_view_leaves_no_folder_behind(sample: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.pdf"
    with pymupdf.open() as pdf:
        pdf.new_page()
        pdf.save(other)
    with pytest.raises(DocumentLoadError, match="1 page"):
        view_index(sample, source=other, output=tmp_path / "new" / "deeper" / "view.html")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["other.pdf"]
    with pytest.raises(OutputExistsError, match="not a folder"):
        view_index(sample, output=other / "view.html")


def test_a_source_with_the_same_page_count_but_other_text_is_refused(sample: Path, tmp_path: Path) -> None:
    from pdf_support import prose

    other = tmp_path / "other.pdf"
    with pymupdf.open() as pdf:
        for number in range(4):  # as many pages as the contract, each with a page of other text
            pdf.new_page().insert_textbox(pymupdf.Rect(72, 72, 520, 760), prose(number * 8, 8), fontsize=10)
        pdf.save(other)
    with pytest.raises(DocumentLoadError, match="another document"):
        view_index(sample, source=other, output=tmp_path / "view.html")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["other.pdf"]
    # The indexed file itself, under another name, is accepted.
    shutil.copy(SAMPLE_PDF, tmp_path / "renamed.pdf")
    assert view_index(sample, source=tmp_path / "renamed.pdf", output=tmp_path / "view.html").is_file()


def test_brackets_of_the_document_are_not_marked_in_snippets(tmp_path: Path) -> None:
    source = tmp_path / "notes.md"
    source.write_text("# Fees\n\nSee [Note 1] and [a] list: the fees are due [b].\n", encoding="utf-8")
    index_document(source)
    text = view_index(tmp_path / "notes.pageindex", query="fees").read_text(encoding="utf-8")
    snippet = text.split('<div class="snippet">', 1)[1].split("</div>", 1)[0]
    assert "[Note 1]" in snippet and "[a]" in snippet and "[b]" in snippet
    assert "<mark>Note 1</mark>" not in snippet and "<mark>fees</mark>" in snippet


def test_every_toc_entry_of_a_deep_tree_is_listed(tmp_path: Path) -> None:
    from extract_thinker_pageindex import Document, Page, ParagraphNode, TocEntry, save_index

    entries = [TocEntry(id="top", title="Top", target_page=0)]
    entries += [  # a chain 20 deep under "top"
        TocEntry(id=f"d{n}", parent_id="top" if n == 0 else f"d{n - 1}", title=f"Deep {n}", target_page=0)
        for n in range(20)
    ]
    entries.append(TocEntry(id="last", title="Last", target_page=0))
    page = Page(index=0, nodes=[ParagraphNode(id="p1", content="Some text.")])
    document = Document(name="deep", extension="md", source_page_count=1, pages=[page], toc=entries)
    save_index(document, tmp_path / "deep.pageindex")
    text = view_index(tmp_path / "deep.pageindex").read_text(encoding="utf-8")
    toc = text.split('<nav id="toc">', 1)[1].split("</nav>", 1)[0]
    for entry in entries:
        assert toc.count(f">{entry.title}</a>") == 1, entry.title
    assert toc.index(">Deep 0<") < toc.index(">Deep 19<") < toc.index(">Last<")
    assert toc.count("<ul>") == toc.count("</ul>") and toc.count("<li>") == toc.count("</li>") == len(entries)
    depth = deepest = 0
    for tag in toc.replace("</ul>", "\0-").replace("<ul>", "\0+").split("\0")[1:]:
        depth += 1 if tag.startswith("+") else -1
        deepest = max(deepest, depth)
    assert deepest == 13


@pytest.mark.parametrize("embed_images", [False, True])
def test_a_vision_index_without_its_source_shows_its_text_and_saved_pictures(
    tmp_path: Path, embed_images: bool
) -> None:
    """The vision strategy keeps no positions of text, only its pictures' crops: without the source the
    view loses no box, so it shows the pages as text with those crops, and says why."""
    import io

    from PIL import Image

    from extract_thinker_pageindex import Document, ImageNode, Page, ParagraphNode, save_index

    crop = io.BytesIO()
    Image.new("RGB", (40, 30), "red").save(crop, "PNG")
    nodes = [
        ParagraphNode(id="p1", content="Revenue grew by a <b>third</b>."),
        ImageNode(
            id="i1", kind="chart", bbox=(100, 100, 300, 250), description="bars", image_data=crop.getvalue()
        ),
    ]
    document = Document(name="scan", extension="pdf", source_page_count=1, pages=[Page(index=0, nodes=nodes)])
    save_index(document, tmp_path / "scan.pageindex")  # no scan.pdf anywhere

    output = view_index(tmp_path / "scan.pageindex", embed_images=embed_images)
    html = output.read_text(encoding="utf-8")
    assert "Pages shown as text:" in html and "scan.pdf" in html
    assert "Revenue grew by a &lt;b&gt;third&lt;/b&gt;." in html
    if embed_images:
        assert '<img class="crop" src="data:image/png;base64,' in html
    else:
        assert '<img class="crop" src="scan.view_files/i1.png"' in html
        assert (tmp_path / "scan.view_files" / "i1.png").read_bytes() == crop.getvalue()


def test_an_index_with_text_positions_still_needs_its_source(sample: Path, tmp_path: Path) -> None:
    moved = tmp_path / "moved.pageindex"
    shutil.copytree(sample, moved)
    with pytest.raises(DocumentLoadError, match="--source"):
        view_index(moved)
    assert not list(tmp_path.glob("*.html"))
