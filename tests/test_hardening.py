"""Hostile files: special files, links, memory bombs in small inputs, odd text, outputs that must not be
wiped, and racing saves. Each test does the bad thing for real and expects the documented result."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from extract_thinker_pageindex import (
    Document,
    DocumentLoaderPageIndex,
    DocumentLoaderPyMuPDF,
    DocumentLoadError,
    IndexFormatError,
    InvalidOptionError,
    OutputExistsError,
    PageIndexWarning,
    build_index,
    index_document,
    load_index,
    save_index,
)
from extract_thinker_pageindex.cli import main as cli_main

MARKDOWN = "# Title\n\nSome text.\n\n## Part\n\nMore text.\n"


def finishes(call: Callable[[], Any], seconds: float = 60) -> Any:
    """Run ``call`` in a thread; fail (instead of hanging the suite) when it does not return in time."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "the call blocked"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    (tmp_path / "doc.md").write_text(MARKDOWN)
    _, path = index_document(tmp_path / "doc.md")
    return path


# -- 1. output folders ---------------------------------------------------------------------------------


def project_folder(root: Path) -> dict[str, bytes]:
    """A folder that holds a document.json among other things a user cares about."""
    (root / "src").mkdir(parents=True)
    files = {
        "document.json": json.dumps({"format_version": "1.0", "pages": [], "name": "x"}).encode(),
        "README.md": b"# my project\n",
        "src/main.py": b"print('hello')\n",
    }
    for name, data in files.items():
        (root / name).write_bytes(data)
    return files


def assert_untouched(root: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        assert (root / name).read_bytes() == data


def test_index_document_refuses_a_project_folder_that_holds_a_document_json(tmp_path: Path):
    (tmp_path / "doc.md").write_text(MARKDOWN)
    files = project_folder(tmp_path / "project")
    with pytest.raises(OutputExistsError, match="not a page index directory"):
        index_document(tmp_path / "doc.md", output=tmp_path / "project")
    assert_untouched(tmp_path / "project", files)


def test_cli_output_at_a_project_folder_named_like_an_index_is_refused(tmp_path: Path, capsys):
    (tmp_path / "doc.md").write_text(MARKDOWN)
    files = project_folder(tmp_path / "out" / "doc.pageindex")
    status = cli_main(["index", str(tmp_path / "doc.md"), "-o", str(tmp_path / "out")])
    assert status == 1
    assert "holds files a page index does not" in capsys.readouterr().err
    assert_untouched(tmp_path / "out" / "doc.pageindex", files)


def test_a_file_a_user_put_into_an_index_is_never_deleted(index_dir: Path, tmp_path: Path):
    (index_dir / "notes.txt").write_text("mine")
    with pytest.raises(OutputExistsError, match=r"notes\.txt"):
        index_document(tmp_path / "doc.md")
    assert (index_dir / "notes.txt").read_text() == "mine"


def test_an_index_and_an_older_format_are_replaced(index_dir: Path, tmp_path: Path):
    data = json.loads((index_dir / "document.json").read_text())
    data["format_version"] = "0.1"
    (index_dir / "document.json").write_text(json.dumps(data))
    (tmp_path / "doc.md").write_text("# New title\n\ntext\n")
    index_document(tmp_path / "doc.md")
    assert load_index(index_dir).title == "New title"


def test_an_empty_folder_is_filled_but_a_file_is_not_replaced(tmp_path: Path):
    document = build_index(MARKDOWN, content_type="markdown")
    (tmp_path / "empty").mkdir()
    save_index(document, tmp_path / "empty")
    assert load_index(tmp_path / "empty").title == "Title"
    (tmp_path / "file.pageindex").write_text("not a folder")
    with pytest.raises(OutputExistsError):
        save_index(document, tmp_path / "file.pageindex")
    assert (tmp_path / "file.pageindex").read_text() == "not a folder"


# -- 2. memory bombs and impossible values in front matter -----------------------------------------------

ALIAS_BOMB = """---
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
title: *h
---
# Heading

Body.
"""


def test_a_front_matter_alias_bomb_is_not_expanded(tmp_path: Path):
    path = tmp_path / "bomb.md"
    path.write_text(ALIAS_BOMB)
    assert path.stat().st_size < 600
    # In a fresh process, so the peak memory is this document's alone.
    code = (
        "import resource, warnings\n"
        "from extract_thinker_pageindex import build_index\n"
        "warnings.simplefilter('ignore')\n"
        f"document = build_index({str(path)!r})\n"
        "print(document.title)\n"
        "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        # Linux: ru_maxrss is inherited across exec from the forking parent (a large pytest process, once
        # a test imported ExtractThinker or Ray); the kernel's high-water mark VmHWM starts afresh at exec.
        "try:\n"
        "    status = open('/proc/self/status').read().splitlines()\n"
        "    peak = next(int(line.split()[1]) for line in status if line.startswith('VmHWM:'))\n"
        "except (OSError, StopIteration):\n"
        "    pass\n"
        "print(peak)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    title, peak_kib = done.stdout.split()
    assert title == "Heading"  # the front matter's fields were not read; the first heading is the title
    assert int(peak_kib) < 400 * 1024


def test_front_matter_with_aliases_warns_and_keeps_the_block(tmp_path: Path):
    path = tmp_path / "bomb.md"
    path.write_text(ALIAS_BOMB)
    with pytest.warns(PageIndexWarning, match="aliases"):
        document = build_index(path)
    metadata = [node for _, node in document.iter_nodes() if node.type == "metadata"]
    assert len(metadata) == 1 and "&a" in metadata[0].content


@pytest.mark.parametrize(
    ("front", "title", "created"),
    [
        ("title: Report\ndate: 2024-02-30", "Report", None),
        ("title: Report\ndate: 0000-01-01", "Report", None),
        ("title: Report\ndate: 2024-02-28", "Report", "2024-02-28T00:00:00"),
        ("title: " + "x" * 5000, "x" * 1000, None),
        ("title: {a: 1}\nauthor: [Ann, Bob]", "Heading", None),
    ],
    ids=["feb-30", "year-0", "valid-date", "long-title", "mapping-title"],
)
def test_front_matter_values_that_cannot_be_dates_or_text_are_left_out(
    front: str, title: str, created: str | None
):
    document = build_index(f"---\n{front}\n---\n# Heading\n\nBody.\n", content_type="markdown")
    assert document.title == title
    assert (document.created_at.isoformat() if document.created_at else None) == created


@pytest.mark.parametrize(
    "front", ["date: !!timestamp 2024-02-30", "title: " + "9" * 5000], ids=["explicit-tag", "huge-int"]
)
def test_front_matter_values_python_cannot_build_are_set_aside_with_a_warning(front: str):
    with pytest.warns(PageIndexWarning, match="a value cannot be read"):
        document = build_index(f"---\n{front}\n---\n# Heading\n\nBody.\n", content_type="markdown")
    assert document.title == "Heading" and document.created_at is None
    assert document.pages[0].nodes[0].type == "metadata"


def test_front_matter_nested_1500_deep_is_refused_with_a_warning():
    text = "---\ntitle: " + "[" * 1500 + "]" * 1500 + "\n---\n# Heading\n\nBody.\n"
    with pytest.warns(PageIndexWarning, match="nests deeper"):
        document = build_index(text, content_type="markdown")
    assert document.title == "Heading"


# -- 3. special files ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["pipe.md", "pipe.pdf", "pipe.txt", "pipe.png"])
def test_a_fifo_named_like_a_document_is_refused_without_blocking(tmp_path: Path, name: str):
    fifo = tmp_path / name
    os.mkfifo(fifo)
    with pytest.raises(
        DocumentLoadError, match=r"^'[^']*' is a named pipe \(FIFO\), not a regular file; refused\.$"
    ):
        finishes(lambda: build_index(fifo, model="openai/never-called"))


def test_the_pdf_loaders_refuse_a_fifo_without_blocking(tmp_path: Path):
    fifo = tmp_path / "pipe.pdf"
    os.mkfifo(fifo)
    with pytest.raises(DocumentLoadError, match="FIFO"):
        finishes(lambda: DocumentLoaderPyMuPDF().load(str(fifo)))
    with pytest.raises(DocumentLoadError, match="FIFO"):
        finishes(lambda: DocumentLoaderPageIndex(cache_dir=False).load(str(fifo)))


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_link_to_dev_zero_is_refused_before_reading(tmp_path: Path):
    link = tmp_path / "endless.md"
    link.symlink_to("/dev/zero")
    with pytest.raises(DocumentLoadError, match="character device"):
        finishes(lambda: build_index(link))


def test_a_link_to_a_regular_document_is_followed(tmp_path: Path):
    (tmp_path / "real.md").write_text(MARKDOWN)
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    assert build_index(tmp_path / "link.md").title == "Title"


def test_a_fifo_as_document_json_or_as_an_image_is_refused(index_dir: Path):
    (index_dir / "document.json").unlink()
    os.mkfifo(index_dir / "document.json")
    with pytest.raises(IndexFormatError, match="FIFO"):
        finishes(lambda: load_index(index_dir))


@pytest.fixture
def index_with_image(tmp_path: Path) -> Path:
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 72), "Annual report", fontsize=20)
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 64), False)
    pixmap.set_rect(pixmap.irect, (200, 30, 30))
    page.insert_image(pymupdf.Rect(100, 200, 300, 400), pixmap=pixmap)
    document.save(tmp_path / "report.pdf")
    _, path = index_document(tmp_path / "report.pdf", strategy="text")
    assert list((path / "images").iterdir())
    return path


def test_a_fifo_as_an_index_image_is_refused(index_with_image: Path):
    image = next((index_with_image / "images").iterdir())
    image.unlink()
    os.mkfifo(image)
    with pytest.raises(IndexFormatError, match="FIFO"):
        finishes(lambda: load_index(index_with_image))


def test_a_hard_link_inside_an_index_to_a_file_outside_is_not_read(index_with_image: Path, tmp_path: Path):
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"private bytes")
    image = next((index_with_image / "images").iterdir())
    image.unlink()
    os.link(secret, image)
    with pytest.raises(IndexFormatError, match="hard links"):
        load_index(index_with_image)


def test_a_document_json_that_is_a_link_is_not_read(index_dir: Path, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere.json"
    shutil.move(index_dir / "document.json", elsewhere)
    (index_dir / "document.json").symlink_to(elsewhere)
    with pytest.raises(IndexFormatError, match="symbolic link"):
        load_index(index_dir)


def test_a_pageindex_path_that_is_a_loop_of_links(tmp_path: Path, capsys):
    loop = tmp_path / "loop.pageindex"
    loop.symlink_to(loop)
    with pytest.raises(IndexFormatError, match="symbolic link"):
        load_index(loop)
    assert cli_main(["inspect", str(loop)]) == 1
    assert "symbolic link" in capsys.readouterr().err
    (tmp_path / "doc.md").write_text(MARKDOWN)
    with pytest.raises(OutputExistsError):
        index_document(tmp_path / "doc.md", output=loop)


# -- 4. odd text and odd index files ---------------------------------------------------------------------


def pdf_with_surrogate_metadata(path: Path) -> Path:
    """Info strings whose UTF-16 holds a lone surrogate (D800, DC00), as damaged producers write them."""
    document = pymupdf.open()
    document.new_page().insert_text((72, 72), "Quarterly results", fontsize=18)
    info = document.get_new_xref()
    document.update_object(info, "<< /Author <FEFF0041D800> /Title <FEFF0054DC00> >>")
    document.xref_set_key(-1, "Info", f"{info} 0 R")
    document.save(path)
    return path


def test_lone_surrogates_in_pdf_metadata_are_cleaned_where_text_enters_the_model(tmp_path: Path, capsys):
    pdf = pdf_with_surrogate_metadata(tmp_path / "report.pdf")
    document, path = index_document(pdf)
    assert document.author is not None and document.author.startswith("A")
    assert "\ufffd" in document.author
    document.model_dump_json()  # serialisable
    assert load_index(path).author == document.author

    assert cli_main(["index", str(pdf), "-o", str(tmp_path / "cli")]) == 0
    assert cli_main(["inspect", str(tmp_path / "cli" / "report.pageindex")]) == 0
    assert "Author:" in capsys.readouterr().out

    pages = DocumentLoaderPageIndex(cache_dir=tmp_path / "cache").load(str(pdf))
    assert "Quarterly results" in pages[0]["content"]


def test_a_file_name_that_is_not_utf8(tmp_path: Path):
    name = os.fsdecode(b"caf\xe9 report.md")  # as os.listdir gives it: a lone surrogate
    (tmp_path / name).write_text(MARKDOWN)
    document, path = index_document(tmp_path / name)
    assert document.name == "caf\ufffd report"
    assert load_index(path).title == "Title"


def test_a_text_document_given_as_a_string_with_surrogates():
    document = build_index("# T\ud800itle\n\nBody \udcff.\n", content_type="markdown")
    assert document.title == "T\ufffditle"


def write_document_json(root: Path, text: str) -> None:
    (root / "document.json").write_text(text)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: "[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (lambda d: json.dumps(d).replace('"pages"', '"huge": ' + "9" * 5000 + ', "pages"', 1), "digits"),
    ],
    ids=["nested", "5000-digit-int"],
)
def test_load_index_refuses_json_that_python_cannot_hold(index_dir: Path, make, message: str):
    data = json.loads((index_dir / "document.json").read_text())
    write_document_json(index_dir, make(data))
    with pytest.raises(IndexFormatError, match=message):
        load_index(index_dir)


@pytest.mark.parametrize(
    "image_path",
    ["images/a\x00b.png", "images/\udcff.png", "images/" + "a" * 5000 + ".png"],
    ids=["nul", "surrogate", "5000-chars"],
)
def test_load_index_refuses_image_paths_the_file_system_cannot_take(index_with_image: Path, image_path: str):
    data = json.loads((index_with_image / "document.json").read_text())
    node = next(n for page in data["pages"] for n in page["nodes"] if n.get("image_path"))
    node["image_path"] = image_path
    # json.dumps writes a lone surrogate as an escape, as a tampered file would hold it.
    (index_with_image / "document.json").write_text(json.dumps(data))
    with pytest.raises(IndexFormatError, match="images live in images/"):
        load_index(index_with_image)


def test_load_index_refuses_a_2_gb_sparse_document_json(index_dir: Path):
    with open(index_dir / "document.json", "r+b") as handle:
        handle.truncate(2 << 30)  # sparse: no disk space used
    with pytest.raises(IndexFormatError, match="over the limit"):
        load_index(index_dir)


# -- 6. racing first saves, poisoned cache ---------------------------------------------------------------


def _save_at(target: str, title: str, start: Any) -> None:
    document = build_index(MARKDOWN.replace("Title", title), content_type="markdown")
    start.wait()
    save_index(document, target)


def test_two_processes_racing_to_save_the_same_new_index(tmp_path: Path):
    context = multiprocessing.get_context("fork")
    for attempt in range(40):
        target = str(tmp_path / f"race-{attempt}.pageindex")
        start = context.Barrier(2)
        workers = [context.Process(target=_save_at, args=(target, f"T{n}", start)) for n in range(2)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(120)
        assert [worker.exitcode for worker in workers] == [0, 0]
        assert load_index(target).title in ("T0", "T1")
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_two_loaders_sharing_a_cache_build_the_same_entry(tmp_path: Path):
    (tmp_path / "doc.md").write_text(MARKDOWN)
    for attempt in range(10):
        cache = tmp_path / f"cache-{attempt}"
        results: list[Any] = []
        barrier = threading.Barrier(2)

        def load(
            cache: Path = cache, barrier: threading.Barrier = barrier, results: list[Any] = results
        ) -> None:
            loader = DocumentLoaderPageIndex(cache_dir=cache)
            barrier.wait()
            results.append(loader.load(str(tmp_path / "doc.md")))

        threads = [threading.Thread(target=load) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert len(results) == 2 and results[0] == results[1]
        assert len([p for p in cache.iterdir() if not p.name.startswith(".")]) == 1


def test_a_poisoned_cache_entry_is_rebuilt(tmp_path: Path):
    (tmp_path / "doc.md").write_text(MARKDOWN)
    loader = DocumentLoaderPageIndex(cache_dir=tmp_path / "cache")
    first = loader.load(str(tmp_path / "doc.md"))
    (entry,) = (tmp_path / "cache").iterdir()
    write_document_json(entry, "[" * 100_000 + "]" * 100_000)
    again = DocumentLoaderPageIndex(cache_dir=tmp_path / "cache")
    assert again.load(str(tmp_path / "doc.md")) == first
    assert again.last_from_cache is False
    assert isinstance(load_index(entry), Document)  # and the entry is whole again


# -- found in review: the same cases by other doors ------------------------------------------------------


def test_cli_index_goes_on_when_an_output_is_a_loop_of_links(tmp_path: Path, capsys):
    (tmp_path / "loop.md").write_text(MARKDOWN)
    (tmp_path / "good.md").write_text(MARKDOWN)
    (tmp_path / "loop.pageindex").symlink_to(tmp_path / "loop.pageindex")
    assert cli_main(["index", str(tmp_path / "loop.md"), str(tmp_path / "good.md")]) == 1
    assert "Traceback" not in capsys.readouterr().err
    assert load_index(tmp_path / "good.pageindex").title == "Title"


def test_front_matter_of_megabytes_is_not_parsed():
    front = "".join(f"k{n}: [a, b, c, d, e]\n" for n in range(20_000))  # about 500 KB
    with pytest.warns(PageIndexWarning, match="longer than 65,536 characters"):
        document = finishes(lambda: build_index(f"---\n{front}---\n# T\n\nbody\n", content_type="markdown"))
    assert document.title == "T"
    assert document.pages[0].nodes[0].type == "metadata"


def test_a_models_answers_are_cleaned_as_they_enter_the_model(tmp_path: Path):
    from extract_thinker_pageindex.postprocess.abstract import DensityStep
    from extract_thinker_pageindex.postprocess.refine import PageReview

    step = DensityStep.model_validate(
        {"missing_entities": ["caf\udcff"], "abstract": "A caf\udcff abstract."}
    )
    assert step.abstract == "A caf\ufffd abstract."
    document = build_index(MARKDOWN, content_type="markdown").model_copy(update={"abstract": step.abstract})
    save_index(document, tmp_path / "a.pageindex")
    assert load_index(tmp_path / "a.pageindex").abstract == "A caf\ufffd abstract."
    review = PageReview.model_validate({"score": 0.5, "problems": ["table \udcff missing"]})
    assert review.problems == ["table \ufffd missing"]


def test_paths_the_file_system_cannot_take(tmp_path: Path, capsys):
    with pytest.raises(IndexFormatError, match="too long"):
        load_index("x" * 5000)
    with pytest.raises(IndexFormatError, match="NUL"):
        load_index(str(tmp_path / "a\x00b.pageindex"))
    document = build_index(MARKDOWN, content_type="markdown")
    with pytest.raises(InvalidOptionError, match="NUL"):
        save_index(document, str(tmp_path / "a\x00b.pageindex"))
    assert cli_main(["inspect", "x" * 5000]) == 1
    assert len(capsys.readouterr().err) < 400


def test_an_output_under_a_file_is_refused_and_a_cache_under_one_is_skipped(tmp_path: Path):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "doc.md").write_text(MARKDOWN)
    with pytest.raises(OutputExistsError, match="is a file, not a folder"):
        index_document(tmp_path / "doc.md", output=tmp_path / "afile" / "doc.pageindex")
    loader = DocumentLoaderPageIndex(cache_dir=tmp_path / "afile")
    with pytest.warns(PageIndexWarning, match="cache could not be written"):
        pages = loader.load(str(tmp_path / "doc.md"))
    assert "Some text." in pages[0]["content"]
    assert (tmp_path / "afile").read_text() == "x"
