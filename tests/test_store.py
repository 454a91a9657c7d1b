"""The ``.pageindex`` directory on real files: index_document, save_index, load_index, default_output_path."""

from __future__ import annotations

import errno
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from extract_thinker_pageindex import (
    FORMAT_VERSION,
    Document,
    HeadingNode,
    ImageNode,
    IndexFormatError,
    OutputExistsError,
    Page,
    PageIndexError,
    ParagraphNode,
    SectionNode,
    TableNode,
    TocEntry,
    build_index,
    index_document,
    load_index,
    save_index,
)
from extract_thinker_pageindex.document.store import default_output_path

MANUAL = """\
---
title: Pump Station Operations Manual
author: Facilities Engineering
date: 2024-03-01
---

# Overview

This manual covers the daily operation of the north pump station.

## Safety

- Wear hearing protection in the pump hall.
- Lock out the motor before maintenance.
  - Verify zero energy with the tester.

### Emergency stop

Press the red button beside each pump.

# Maintenance

Inspect the seals every 500 running hours.

| Part    | Interval (h) |
|---------|--------------|
| Seal    | 500          |
| Bearing | 2000         |

```text
# log line, not a heading
```

# Contacts

Call the duty engineer on extension 4410.
"""


def _png(width: int, height: int, colour: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    image = Image.new("RGB", (width, height), colour)
    image.putpixel((0, 0), (255, 255, 255))
    image.save(buffer, format="PNG")
    return buffer.getvalue()


CHART_PNG = _png(24, 16, (30, 90, 200))
TABLE_PNG = _png(40, 12, (240, 240, 230))


def _figure_document() -> Document:
    """A hand-built document with an image node and a table node that both carry PNG bytes."""
    return Document(
        name="annual-report",
        extension="pdf",
        title="Annual Report 2023",
        source_page_count=2,
        pages=[
            Page(
                index=0,
                nodes=[
                    SectionNode(id="sec-1", description="Revenue by region."),
                    HeadingNode(id="head-1", parent_id="sec-1", level="h1", content="Revenue"),
                    ParagraphNode(id="par-1", parent_id="sec-1", content="Revenue grew 12% to $4.1bn."),
                    ImageNode(
                        id="img-1",
                        parent_id="sec-1",
                        kind="chart",
                        bbox=(72, 144, 300, 320),
                        caption="Figure 1: revenue by region",
                        description="A bar chart of revenue for four regions.",
                        image_data=CHART_PNG,
                    ),
                ],
            ),
            Page(
                index=1,
                nodes=[
                    TableNode(
                        id="tbl-1",
                        parent_id="sec-1",
                        caption="Table 1",
                        content="| Region | Revenue |\n|---|---|\n| EMEA | 1.2 |",
                        image_data=TABLE_PNG,
                    ),
                ],
            ),
        ],
        toc=[TocEntry(id="toc-1", title="Revenue", target_page=0, target_section_id="sec-1")],
    )


def _snapshot(root: Path) -> dict[str, bytes | None]:
    """Every entry under root: files with their bytes, directories as None."""
    return {
        str(path.relative_to(root)): (path.read_bytes() if path.is_file() else None)
        for path in sorted(root.rglob("*"))
    }


def _leftovers(parent: Path) -> list[str]:
    return sorted(
        p.name
        for p in parent.iterdir()
        if p.name.startswith(".") and (".tmp-" in p.name or ".old-" in p.name)
    )


def _without_image_paths(dump: dict) -> dict:
    for page in dump["pages"]:
        for node in page["nodes"]:
            node.pop("image_path", None)
    return dump


@pytest.fixture
def manual(tmp_path: Path) -> Path:
    path = tmp_path / "manual.md"
    path.write_text(MANUAL, encoding="utf-8")
    return path


# -- default_output_path -----------------------------------------------------------------------------


def test_default_output_path_sits_beside_the_source():
    assert default_output_path("/data/filings/acme-10k.md") == Path("/data/filings/acme-10k.pageindex")
    assert default_output_path(Path("notes.txt")) == Path("notes.pageindex")


def test_default_output_path_drops_only_the_last_suffix():
    assert default_output_path("/data/q3.final.md") == Path("/data/q3.final.pageindex")


# -- index_document ----------------------------------------------------------------------------------


def test_index_document_writes_the_index_beside_the_file(manual: Path):
    document, written = index_document(manual)

    assert written == manual.parent / "manual.pageindex"
    assert (written / "document.json").is_file()
    assert not (written / "images").exists()  # Markdown has no pictures to store
    saved = json.loads((written / "document.json").read_text(encoding="utf-8"))
    assert saved["format_version"] == FORMAT_VERSION
    assert saved["name"] == "manual"
    assert saved["title"] == "Pump Station Operations Manual"
    assert [page["index"] for page in saved["pages"]] == [0, 1, 2]
    assert len(document.pages) == 3


def test_index_document_writes_to_the_given_output_creating_parents(manual: Path, tmp_path: Path):
    target = tmp_path / "indexes" / "2024" / "ops.pageindex"
    _, written = index_document(manual, output=target)

    assert written == target
    assert (target / "document.json").is_file()
    assert not (manual.parent / "manual.pageindex").exists()


@pytest.mark.parametrize("as_document_json", [False, True], ids=["directory", "document.json"])
def test_load_index_gives_back_the_built_document(manual: Path, as_document_json: bool):
    document, written = index_document(manual)

    loaded = load_index(written / "document.json" if as_document_json else written)

    assert loaded.model_dump() == document.model_dump()
    assert loaded.author == "Facilities Engineering"
    assert [entry.title for entry in loaded.toc] == [
        "Overview",
        "Safety",
        "Emergency stop",
        "Maintenance",
        "Contacts",
    ]


def test_load_index_accepts_a_string_path(manual: Path):
    document, written = index_document(manual)
    assert load_index(str(written)).model_dump() == document.model_dump()


def test_index_document_passes_the_page_selection_to_the_builder(manual: Path):
    document, written = index_document(manual, pages="2")

    loaded = load_index(written)
    assert [page.index for page in loaded.pages] == [1]
    assert loaded.source_page_count == 3
    assert [entry.title for entry in loaded.toc] == ["Maintenance"]
    assert loaded.model_dump() == document.model_dump()


def test_index_document_of_markdown_text_needs_an_output(tmp_path: Path):
    text = "# Terms\n\nPayment is due in 30 days.\n"
    with pytest.raises(ValueError, match="output="):
        index_document(text, content_type="markdown")

    document, written = index_document(text, output=tmp_path / "terms.pageindex", content_type="markdown")
    assert written == tmp_path / "terms.pageindex"
    assert load_index(written).model_dump() == document.model_dump()


# -- images ------------------------------------------------------------------------------------------


def test_image_and_table_bytes_round_trip_through_images_dir(tmp_path: Path):
    document = _figure_document()
    target = tmp_path / "annual-report.pageindex"

    assert save_index(document, target) == target

    assert sorted(p.name for p in (target / "images").iterdir()) == ["img-1.png", "tbl-1.png"]
    assert (target / "images" / "img-1.png").read_bytes() == CHART_PNG
    assert (target / "images" / "tbl-1.png").read_bytes() == TABLE_PNG
    saved = json.loads((target / "document.json").read_text(encoding="utf-8"))
    saved_nodes = {node["id"]: node for page in saved["pages"] for node in page["nodes"]}
    assert saved_nodes["img-1"]["image_path"] == "images/img-1.png"
    assert saved_nodes["tbl-1"]["image_path"] == "images/tbl-1.png"
    assert "image_data" not in saved_nodes["img-1"]

    loaded = load_index(target)
    nodes = loaded.node_map()
    assert nodes["img-1"].image_data == CHART_PNG
    assert nodes["tbl-1"].image_data == TABLE_PNG
    assert nodes["img-1"].image_path == "images/img-1.png"
    with Image.open(io.BytesIO(nodes["img-1"].image_data)) as picture:
        assert picture.size == (24, 16)
    assert _without_image_paths(loaded.model_dump()) == _without_image_paths(document.model_dump())


def test_save_does_not_change_the_document_it_was_given(tmp_path: Path):
    document = _figure_document()
    before = document.model_dump()
    save_index(document, tmp_path / "out.pageindex")
    assert document.model_dump() == before
    assert document.node_map()["img-1"].image_path is None


def test_an_image_path_without_bytes_is_not_saved(tmp_path: Path):
    document = Document(
        name="memo",
        pages=[
            Page(
                index=0,
                nodes=[
                    SectionNode(id="s1"),
                    HeadingNode(id="h1", parent_id="s1", level="h1", content="Memo"),
                    ImageNode(id="logo", parent_id="s1", kind="logo", image_path="images/logo.png"),
                ],
            )
        ],
    )
    target = save_index(document, tmp_path / "memo.pageindex")

    saved = json.loads((target / "document.json").read_text(encoding="utf-8"))
    assert saved["pages"][0]["nodes"][2]["image_path"] is None
    logo = load_index(target).node_map()["logo"]
    assert logo.image_path is None
    assert logo.image_data is None


# -- replacing an index ------------------------------------------------------------------------------


def test_reindexing_replaces_the_previous_index_and_leaves_no_staging_dirs(manual: Path):
    _, written = index_document(manual)
    assert load_index(written).title == "Pump Station Operations Manual"

    manual.write_text(
        "# Decommissioning\n\nThe north pump station closes in June.\n\n# Handover\n\nKeys go to the city.\n",
        encoding="utf-8",
    )
    document, again = index_document(manual)

    assert again == written
    loaded = load_index(written)
    assert loaded.model_dump() == document.model_dump()
    assert loaded.title == "Decommissioning"
    assert [entry.title for entry in loaded.toc] == ["Decommissioning", "Handover"]
    assert _leftovers(manual.parent) == []
    assert sorted(p.name for p in manual.parent.iterdir()) == ["manual.md", "manual.pageindex"]


def test_replacing_an_index_with_images_removes_the_old_images(tmp_path: Path):
    target = tmp_path / "report.pageindex"
    save_index(_figure_document(), target)
    assert (target / "images" / "img-1.png").is_file()

    plain = Document(
        name="report",
        pages=[Page(index=0, nodes=[ParagraphNode(id="p1", content="Figures moved to the appendix.")])],
    )
    save_index(plain, target)

    assert sorted(p.name for p in target.iterdir()) == ["document.json"]
    assert load_index(target).model_dump() == plain.model_dump()
    assert _leftovers(tmp_path) == []


def test_save_into_an_existing_empty_directory(tmp_path: Path):
    target = tmp_path / "empty.pageindex"
    target.mkdir()
    save_index(_figure_document(), target)
    assert load_index(target).node_map()["tbl-1"].image_data == TABLE_PNG


def test_save_refuses_a_non_empty_directory_without_document_json(tmp_path: Path):
    target = tmp_path / "photos"
    target.mkdir()
    (target / "holiday.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    (target / "notes").mkdir()
    (target / "notes" / "todo.txt").write_text("buy film\n", encoding="utf-8")
    before = _snapshot(target)

    with pytest.raises(OutputExistsError, match="not a page index directory") as excinfo:
        save_index(_figure_document(), target)

    assert isinstance(excinfo.value, FileExistsError)
    assert isinstance(excinfo.value, PageIndexError)
    assert _snapshot(target) == before
    assert _leftovers(tmp_path) == []


def test_save_refuses_a_regular_file(tmp_path: Path):
    target = tmp_path / "report.pageindex"
    target.write_text("I am a file, keep me.\n", encoding="utf-8")

    with pytest.raises(OutputExistsError):
        save_index(_figure_document(), target)

    assert target.read_text(encoding="utf-8") == "I am a file, keep me.\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.pageindex"]


def test_index_document_refuses_an_existing_non_index_directory(manual: Path):
    occupied = manual.parent / "manual.pageindex"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("precious\n", encoding="utf-8")

    with pytest.raises(OutputExistsError):
        index_document(manual)

    assert sorted(p.name for p in occupied.iterdir()) == ["keep.txt"]


# -- a save that fails half way ----------------------------------------------------------------------

# Run in a child process: RLIMIT_FSIZE caps the size of any file the child writes, so writing the
# 1 MB image fails for certain, root or not. With SIGXFSZ ignored the write raises EFBIG (an
# exception during the save); with its default action the kernel kills the child mid-write (a crash).
_FAILING_SAVE = """
import os, resource, signal, sys
from extract_thinker_pageindex.document.model import Document, HeadingNode, ImageNode, Page, SectionNode
from extract_thinker_pageindex.document.store import save_index

mode, output = sys.argv[1], sys.argv[2]
document = Document(name="manual", pages=[Page(index=0, nodes=[
    SectionNode(id="s1"),
    HeadingNode(id="h1", parent_id="s1", level="h1", content="Scanned appendix"),
    ImageNode(id="scan-1", parent_id="s1", kind="photo", image_data=os.urandom(1_000_000)),
])])
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
signal.signal(signal.SIGXFSZ, signal.SIG_DFL if mode == "crash" else signal.SIG_IGN)
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
limit = 65536 if hard == resource.RLIM_INFINITY else min(65536, hard)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
try:
    save_index(document, output)
except OSError as exc:
    print("OSError", exc.errno)
    sys.exit(3)
print("saved")
"""

needs_fsize_limit = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="needs Linux RLIMIT_FSIZE and SIGXFSZ semantics"
)


def _run_failing_save(mode: str, target: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run(
        [sys.executable, "-c", _FAILING_SAVE, mode, str(target)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@needs_fsize_limit
def test_an_error_during_save_leaves_the_previous_index_unchanged(manual: Path):
    document, written = index_document(manual)
    before = _snapshot(written)

    result = _run_failing_save("raise", written)

    assert result.returncode == 3, result.stderr
    assert result.stdout.split() == ["OSError", str(errno.EFBIG)]
    assert _snapshot(written) == before
    assert load_index(written).model_dump() == document.model_dump()
    assert _leftovers(manual.parent) == []


@needs_fsize_limit
def test_a_crash_during_save_leaves_the_previous_index_loadable(manual: Path):
    document, written = index_document(manual)
    before = _snapshot(written)

    result = _run_failing_save("crash", written)

    assert result.returncode == -signal.SIGXFSZ, (result.returncode, result.stdout, result.stderr)
    # The child died while writing the staging copy, which is left behind; the index itself is intact.
    assert len(_leftovers(manual.parent)) == 1
    assert _snapshot(written) == before
    assert load_index(written).model_dump() == document.model_dump()

    # A later save still works despite the debris.
    save_index(_figure_document(), written)
    assert load_index(written).node_map()["img-1"].image_data == CHART_PNG


# -- load_index refusals -----------------------------------------------------------------------------


@pytest.fixture
def saved_index(tmp_path: Path) -> Path:
    return save_index(_figure_document(), tmp_path / "annual-report.pageindex")


def _edit_json(index: Path, edit) -> None:
    path = index / "document.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _node(data: dict, node_id: str) -> dict:
    return next(node for page in data["pages"] for node in page["nodes"] if node["id"] == node_id)


def test_load_index_of_a_missing_directory(tmp_path: Path):
    with pytest.raises(IndexFormatError, match="No page index"):
        load_index(tmp_path / "nowhere.pageindex")


def test_load_index_of_a_directory_without_document_json(tmp_path: Path):
    (tmp_path / "stray.pageindex").mkdir()
    with pytest.raises(IndexFormatError, match=r"document\.json is missing"):
        load_index(tmp_path / "stray.pageindex")


def test_load_index_of_a_source_file(manual: Path):
    with pytest.raises(IndexFormatError):
        load_index(manual)


def test_load_index_of_truncated_json(saved_index: Path):
    raw = (saved_index / "document.json").read_bytes()
    (saved_index / "document.json").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(IndexFormatError, match="not valid JSON"):
        load_index(saved_index)


def test_load_index_of_non_utf8_bytes(saved_index: Path):
    (saved_index / "document.json").write_bytes(b'{"name": "\xff\xfe"}')
    with pytest.raises(IndexFormatError, match="not valid JSON"):
        load_index(saved_index)


def test_load_index_of_a_json_list(saved_index: Path):
    (saved_index / "document.json").write_text("[1, 2, 3]", encoding="utf-8")
    with pytest.raises(IndexFormatError, match="must hold a JSON object, not list"):
        load_index(saved_index)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        pytest.param(lambda d: d.update(format_version="9.9"), "format_version '9.9'", id="version-9.9"),
        pytest.param(lambda d: d.pop("format_version"), "format_version None", id="version-missing"),
        pytest.param(lambda d: d.update(format_version=1.0), "format_version 1.0", id="version-number"),
    ],
)
def test_load_index_refuses_unknown_format_versions(saved_index: Path, edit, message: str):
    _edit_json(saved_index, edit)
    with pytest.raises(IndexFormatError, match=re.escape(message)):
        load_index(saved_index)


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        pytest.param(lambda d: d.update(name=5), "name", id="name-int"),
        pytest.param(lambda d: d.update(pages={"0": []}), "pages", id="pages-dict"),
        pytest.param(lambda d: d["pages"][0].update(index="zero"), "pages.0.index", id="index-str"),
        pytest.param(lambda d: d["pages"][0].update(index=-1), "pages.0.index", id="index-negative"),
        pytest.param(lambda d: _node(d, "head-1").update(level="h9"), "pages.0.nodes.1", id="heading-level"),
        pytest.param(lambda d: _node(d, "img-1").update(type="chart"), "pages.0.nodes.3", id="node-type"),
        pytest.param(lambda d: _node(d, "img-1").update(bbox=[300, 0, 10, 5]), "pages.0.nodes.3", id="bbox"),
        pytest.param(lambda d: d["toc"][0].update(target_page="first"), "toc.0.target_page", id="toc-page"),
    ],
)
def test_load_index_refuses_wrong_field_types(saved_index: Path, edit, where: str):
    _edit_json(saved_index, edit)
    with pytest.raises(IndexFormatError, match="not a valid page index") as excinfo:
        load_index(saved_index)
    assert where in str(excinfo.value)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        pytest.param(
            lambda d: _node(d, "par-1").update(parent_id="sec-9"), "'sec-9', which is not a node", id="parent"
        ),
        pytest.param(
            lambda d: _node(d, "par-1").update(id="head-1"), "'head-1' is used more than once", id="dup"
        ),
        pytest.param(
            lambda d: d["toc"][0].update(target_section_id="sec-9"),
            "'sec-9', which is not a section",
            id="toc",
        ),
        pytest.param(lambda d: _node(d, "sec-1").update(parent_id="sec-1"), "its own ancestor", id="cycle"),
    ],
)
def test_load_index_refuses_broken_references(saved_index: Path, edit, message: str):
    _edit_json(saved_index, edit)
    with pytest.raises(IndexFormatError, match=re.escape(message)):
        load_index(saved_index)


@pytest.mark.parametrize(
    "image_path",
    ["../secret.png", "images/../../secret.png", "../annual-report.pageindex/images/img-1.png"],
)
def test_load_index_refuses_an_image_path_with_parent_traversal(
    saved_index: Path, tmp_path: Path, image_path: str
):
    # Every target exists, so only the path check can refuse them.
    (tmp_path / "secret.png").write_bytes(b"outside the index")
    _edit_json(saved_index, lambda d: _node(d, "img-1").update(image_path=image_path))
    with pytest.raises(IndexFormatError, match="leaves the index directory"):
        load_index(saved_index)


def test_load_index_refuses_an_absolute_image_path(saved_index: Path):
    absolute = str((saved_index / "images" / "img-1.png").resolve())
    _edit_json(saved_index, lambda d: _node(d, "img-1").update(image_path=absolute))
    with pytest.raises(IndexFormatError, match="must be relative"):
        load_index(saved_index)


def test_load_index_refuses_an_image_that_is_a_symlink_outside(saved_index: Path, tmp_path: Path):
    secret = tmp_path / "secret.png"
    secret.write_bytes(CHART_PNG)
    image = saved_index / "images" / "img-1.png"
    image.unlink()
    image.symlink_to(secret)
    with pytest.raises(IndexFormatError, match="symbolic link"):
        load_index(saved_index)


def test_load_index_refuses_an_images_directory_that_is_a_symlink(saved_index: Path, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(saved_index / "images", elsewhere)
    shutil.rmtree(saved_index / "images")
    (saved_index / "images").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(IndexFormatError, match="symbolic link"):
        load_index(saved_index)


def test_load_index_refuses_a_missing_image(saved_index: Path):
    (saved_index / "images" / "tbl-1.png").unlink()
    expected = "'tbl-1' names image 'images/tbl-1.png', which is missing"
    with pytest.raises(IndexFormatError, match=re.escape(expected)):
        load_index(saved_index)


def test_load_index_refuses_an_image_path_that_is_a_directory(saved_index: Path):
    (saved_index / "images" / "sub.png").mkdir()
    _edit_json(saved_index, lambda d: _node(d, "img-1").update(image_path="images/sub.png"))
    with pytest.raises(IndexFormatError, match="Cannot read image"):
        load_index(saved_index)


def test_index_format_error_is_a_value_error(tmp_path: Path):
    with pytest.raises(ValueError):
        load_index(tmp_path / "missing.pageindex")


@pytest.mark.parametrize("image_path", ["document.json", "images", "other/img-1.png"])
def test_load_index_only_reads_images_from_the_images_folder(saved_index: Path, image_path: str):
    _edit_json(saved_index, lambda d: _node(d, "img-1").update(image_path=image_path))
    with pytest.raises(IndexFormatError, match="images live in images/"):
        load_index(saved_index)


# -- one output, two sources --------------------------------------------------------------------------------

SAMPLES = Path(__file__).resolve().parents[1] / "examples" / "data"


@pytest.fixture
def agreement(tmp_path: Path) -> tuple[Path, Path]:
    """The bundled contract as PDF and as Markdown, side by side: both default to one index folder."""
    pdf = shutil.copy(SAMPLES / "service-agreement.pdf", tmp_path)
    markdown = shutil.copy(SAMPLES / "service-agreement.md", tmp_path)
    return Path(pdf), Path(markdown)


def test_the_index_of_another_file_is_never_replaced_unasked(agreement: tuple[Path, Path]) -> None:
    pdf, markdown = agreement
    _, target = index_document(pdf)
    assert target == default_output_path(markdown)  # the same folder for both
    before = (target / "document.json").read_bytes()
    with pytest.raises(
        OutputExistsError, match=r"'service-agreement.pdf', not of 'service-agreement.md'.*--force"
    ):
        index_document(markdown)
    assert (target / "document.json").read_bytes() == before
    assert load_index(target).source_file == "service-agreement.pdf"
    # The same file again is replaced as before; asked, the other file's too.
    index_document(pdf)
    document, _ = index_document(markdown, overwrite=True)
    assert load_index(target).source_file == "service-agreement.md" == document.source_file
    with pytest.raises(OutputExistsError):
        save_index(build_index(pdf), target)
    save_index(build_index(pdf), target, overwrite=True)
    assert load_index(target).extension == "pdf"


def test_an_index_from_before_source_file_is_told_by_its_name_and_extension(
    agreement: tuple[Path, Path],
) -> None:
    pdf, markdown = agreement
    _, target = index_document(pdf)
    data = json.loads((target / "document.json").read_text())
    data.pop("source_file")
    data["format_version"] = "1.1"
    (target / "document.json").write_text(json.dumps(data))
    with pytest.raises(OutputExistsError, match=r"'service-agreement\.pdf'"):
        index_document(markdown)
    index_document(pdf)  # service-agreement + pdf: the same file


def test_the_refusal_comes_before_any_model_call(tmp_path: Path, llm_server) -> None:
    picture = tmp_path / "scan.png"
    Image.new("RGB", (200, 100), "white").save(picture)
    (tmp_path / "scan.md").write_text("# Scan\n\nThe notes on the scan.\n")
    index_document(tmp_path / "scan.md")
    with pytest.raises(OutputExistsError):
        index_document(picture, model="openai/test-vision")
    assert llm_server.requests == []


def test_index_force_replaces_the_index_of_another_file(agreement: tuple[Path, Path], capsys) -> None:
    from extract_thinker_pageindex.cli import main

    pdf, markdown = agreement
    assert main(["index", str(pdf)]) == 0
    assert main(["index", str(markdown)]) == 1
    error = capsys.readouterr().err
    assert "holds the page index of 'service-agreement.pdf'" in error and "--force" in error
    assert load_index(default_output_path(pdf)).extension == "pdf"
    assert main(["index", str(markdown), "--force"]) == 0
    assert load_index(default_output_path(pdf)).extension == "md"
