"""Saved indexes and their writes, done badly for real: numbers beyond float range in ``document.json``,
TOCs and PDF outlines nested 1,200 deep, a 40 MB index loaded in a fresh process, and saves onto a full
disk (a 256 KiB tmpfs), into a folder made read-only (written as user ``nobody``) and onto a read-only
mount."""

from __future__ import annotations

import errno
import io
import json
import os
import pwd
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from extract_thinker_pageindex import (
    DocumentLoaderPageIndex,
    IndexFormatError,
    OutputExistsError,
    OutputWriteError,
    index_document,
    inspect,
    load_index,
    print_toc_tree,
    save_index,
)
from extract_thinker_pageindex.cli import main as cli_main
from extract_thinker_pageindex.document.model import (
    MAX_TOC_DEPTH,
    Document,
    FailedPage,
    HeadingNode,
    ImageNode,
    ModelUsage,
    Page,
    PageRefinement,
    ParagraphNode,
    SectionNode,
    TocEntry,
)
from system_support import as_another_user, mounted_tmpfs

MARKDOWN = "# Title\n\nThe board approved the dividend.\n\n## Results\n\nRevenue grew by four percent.\n"
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The command in a process of its own."""
    command = [sys.executable, "-m", "extract_thinker_pageindex", *args]
    return subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=300, check=False)


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file (bytes) and folder (None) under ``root``, hidden ones (staging folders) included."""
    return {
        str(path.relative_to(root)): None if path.is_dir() else path.read_bytes()
        for path in sorted(root.rglob("*"))
    }


# -- 1. numbers beyond float range ------------------------------------------------------------------------


@pytest.fixture
def pdf_index(tmp_path: Path) -> Path:
    """A text-strategy index of a real PDF (its nodes carry boxes), beside its source."""
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 72), "Annual report", fontsize=22)
    page.insert_textbox(pymupdf.Rect(72, 100, 520, 400), "Revenue grew by four percent. " * 8, fontsize=11)
    document.save(tmp_path / "report.pdf")
    document.close()
    _, written = index_document(tmp_path / "report.pdf")
    return written


def put_number(index: Path, literal: str) -> None:
    """Write ``literal`` (JSON text, such as ``1e999``) as the first coordinate of the first node's box."""
    path = index / "document.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    node = next(node for page in data["pages"] for node in page["nodes"] if node.get("bbox"))
    node["bbox"][0] = "@number@"
    path.write_text(json.dumps(data, indent=2).replace('"@number@"', literal), encoding="utf-8")


BAD_NUMBERS = ["1e999", "-1e999", "Infinity", "-Infinity", "NaN"]


@pytest.mark.parametrize("literal", BAD_NUMBERS)
def test_a_bbox_beyond_float_range_is_an_index_format_error(
    pdf_index: Path, literal: str, capsys: pytest.CaptureFixture[str]
) -> None:
    put_number(pdf_index, literal)
    with pytest.raises(IndexFormatError, match=r"bbox: Value error, bbox coordinates must be finite numbers"):
        load_index(pdf_index)
    with pytest.raises(IndexFormatError, match="finite numbers"):
        inspect(pdf_index, file=io.StringIO())
    view = pdf_index.parent / "report.view.html"
    for command in (["inspect", str(pdf_index)], ["search", str(pdf_index), "-q", "revenue"]):
        assert cli_main(command) == 1
        err = capsys.readouterr().err
        assert "bbox coordinates must be finite numbers" in err and "unexpected" not in err
    assert cli_main(["view", str(pdf_index), "-o", str(view)]) == 1
    assert "finite numbers" in capsys.readouterr().err
    assert not view.exists()


def test_the_commands_report_an_infinite_bbox_in_a_process_of_their_own(pdf_index: Path) -> None:
    put_number(pdf_index, "1e999")
    for command in (
        ["inspect", str(pdf_index)],
        ["inspect", "--json", str(pdf_index)],
        ["search", str(pdf_index), "-q", "revenue"],
        ["view", str(pdf_index), "-o", str(pdf_index.parent / "v.html")],
    ):
        done = run_cli(*command)
        assert done.returncode == 1, (command, done.stderr)
        assert "finite numbers" in done.stderr and "Traceback" not in done.stderr, command
        assert "OverflowError" not in done.stderr, command


def full_document() -> Document:
    """A document with a number in every numeric field the format has."""
    return Document(
        name="numbers",
        source_page_count=3,
        pages=[
            Page(
                index=0,
                nodes=[
                    SectionNode(id="s1"),
                    HeadingNode(
                        id="h1", parent_id="s1", level="h1", content="Numbers", bbox=(10, 10, 90, 30)
                    ),
                    ParagraphNode(id="p1", parent_id="s1", content="Text.", bbox=(10, 40, 90, 60)),
                    ImageNode(id="i1", parent_id="s1", bbox=(10, 70, 90, 120), description="A chart."),
                ],
            )
        ],
        toc=[
            TocEntry(id="t1", title="Numbers", target_page=0, target_section_id="s1", bbox=(10, 10, 90, 30))
        ],
        usage=ModelUsage(calls=3, input_tokens=1200, output_tokens=300),
        failed_pages=[FailedPage(index=2, reason="The model gave up.")],
        refinement=[PageRefinement(index=0, score_before=0.5, score_after=0.9, reextractions=1)],
    )


def _numbers(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, (*path, key))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            yield from _numbers(item, (*path, position))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path


def test_no_number_anywhere_beyond_float_range_raises_anything_but_index_format_error(tmp_path: Path) -> None:
    index = save_index(full_document(), tmp_path / "numbers.pageindex")
    original = json.loads((index / "document.json").read_text(encoding="utf-8"))
    paths = list(_numbers(original))
    assert len(paths) >= 20  # page index, boxes, TOC target, usage, failed page, refinement scores...
    outcomes: dict[str, int] = {}
    for path in paths:
        for literal in [*BAD_NUMBERS, "1" + "0" * 400]:
            data = json.loads(json.dumps(original))
            holder = data
            for key in path[:-1]:
                holder = holder[key]
            holder[path[-1]] = "@number@"
            text = json.dumps(data).replace('"@number@"', literal)
            (index / "document.json").write_text(text, encoding="utf-8")
            try:
                load_index(index)
            except IndexFormatError:
                outcomes["refused"] = outcomes.get("refused", 0) + 1
            else:  # a float field (a refinement score) may hold it
                outcomes["loaded"] = outcomes.get("loaded", 0) + 1
    assert outcomes["refused"] > outcomes.get("loaded", 0)


def test_a_cache_entry_with_an_infinite_bbox_is_rebuilt(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    page.insert_textbox(pymupdf.Rect(72, 72, 520, 400), "The board approved the dividend. " * 8, fontsize=11)
    document.save(tmp_path / "minutes.pdf")
    document.close()
    cache = tmp_path / "cache"
    first = DocumentLoaderPageIndex(cache_dir=cache).load(str(tmp_path / "minutes.pdf"))
    (entry,) = cache.iterdir()
    put_number(entry, "1e999")
    with pytest.raises(IndexFormatError):
        load_index(entry)
    again = DocumentLoaderPageIndex(cache_dir=cache)
    assert again.load(str(tmp_path / "minutes.pdf")) == first
    assert again.last_from_cache is False
    assert isinstance(load_index(entry), Document)  # the entry is whole again
    third = DocumentLoaderPageIndex(cache_dir=cache)
    assert third.load(str(tmp_path / "minutes.pdf")) == first
    assert third.last_from_cache is True
    assert [path.name for path in cache.iterdir()] == [entry.name]  # nothing set aside is left


# -- 2. trees nested 1,200 deep ---------------------------------------------------------------------------

DEPTH = 1_200


def deep_index(folder: Path) -> Path:
    """A saved index whose sections and TOC entries each form one chain 1,200 deep."""
    nodes: list[Any] = []
    toc = []
    for level in range(DEPTH):
        parent = f"s{level - 1}" if level else None
        nodes.append(SectionNode(id=f"s{level}", parent_id=parent))
        nodes.append(
            HeadingNode(id=f"h{level}", parent_id=f"s{level}", level="h6", content=f"Level {level + 1}")
        )
        toc.append(
            TocEntry(
                id=f"t{level}",
                parent_id=f"t{level - 1}" if level else None,
                title=f"Level {level + 1}",
                target_page=0,
                target_section_id=f"s{level}",
            )
        )
    nodes.append(ParagraphNode(id="p", parent_id=f"s{DEPTH - 1}", content="The deepest dividend."))
    document = Document(name="deep", extension="md", pages=[Page(index=0, nodes=nodes)], toc=toc)
    return save_index(document, folder / "deep.pageindex")


def test_a_toc_nested_1200_deep_is_printed_by_inspect_and_print_toc_tree(tmp_path: Path) -> None:
    index = deep_index(tmp_path)
    out = io.StringIO()
    stats = inspect(index, file=out)
    assert stats["toc_entries"] == DEPTH
    lines = out.getvalue().splitlines()
    tree = lines[lines.index("Table of contents") + 1 :]
    assert [line.strip().split("  [")[0] for line in tree] == [f"- Level {n + 1}" for n in range(DEPTH)]
    assert tree[1].startswith("  - Level 2  [p. 1]")
    indent = "  " * (MAX_TOC_DEPTH - 1)
    assert tree[MAX_TOC_DEPTH - 1] == f"{indent}- Level {MAX_TOC_DEPTH}  [p. 1]"
    assert tree[-1] == f"{indent}- Level 1200  [p. 1; level 1,200]"  # indented no deeper
    printed = io.StringIO()
    print_toc_tree(load_index(index), file=printed)
    assert printed.getvalue().splitlines() == tree


def test_the_commands_read_a_tree_nested_1200_deep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = deep_index(tmp_path)
    assert cli_main(["inspect", str(index)]) == 0
    assert "level 1,200" in capsys.readouterr().out
    assert cli_main(["inspect", "--json", str(index)]) == 0
    assert json.loads(capsys.readouterr().out)["toc_entries"] == DEPTH
    assert cli_main(["search", str(index), "-q", "deepest dividend"]) == 0
    assert "page    1" in capsys.readouterr().out
    view = tmp_path / "deep.view.html"
    assert cli_main(["view", str(index), "-o", str(view)]) == 0
    assert "Level 1200" in view.read_text(encoding="utf-8")


def deep_outline_pdf(path: Path, depth: int = DEPTH) -> list[str]:
    """A valid PDF whose outline is one chain ``depth`` deep, each entry's title a line on its page."""
    titles = [f"Heading {number:04d}" for number in range(1, depth + 1)]
    per_page = 30
    document = pymupdf.open()
    for start in range(0, depth, per_page):
        page = document.new_page()
        for line, title in enumerate(titles[start : start + per_page]):
            page.insert_text((72, 50 + 25 * line), title, fontsize=12)
    document.set_toc([[number + 1, title, number // per_page + 1] for number, title in enumerate(titles)])
    document.save(path)
    document.close()
    return titles


def _depths(toc: list[TocEntry]) -> list[int]:
    parents = {entry.id: entry.parent_id for entry in toc}
    depths = []
    for entry in toc:
        depth, parent = 1, entry.parent_id
        while parent is not None:
            depth, parent = depth + 1, parents[parent]
        depths.append(depth)
    return depths


def test_a_pdf_whose_outline_nests_1200_deep_is_indexed_with_every_entry(tmp_path: Path) -> None:
    titles = deep_outline_pdf(tmp_path / "deep.pdf")
    document, written = index_document(tmp_path / "deep.pdf")
    assert [entry.title for entry in document.toc] == titles  # every entry, in order
    depths = _depths(document.toc)
    assert depths[:MAX_TOC_DEPTH] == list(range(1, MAX_TOC_DEPTH + 1))
    assert set(depths[MAX_TOC_DEPTH:]) == {MAX_TOC_DEPTH}  # deeper ones kept at the limit
    assert all(entry.target_section_id is not None for entry in document.toc)  # each found its heading
    assert [entry.target_page for entry in document.toc] == [n // 30 for n in range(DEPTH)]
    assert load_index(written).toc == document.toc
    out = io.StringIO()
    inspect(written, file=out)
    assert "- Heading 1200  [p. 40]" in out.getvalue()


def test_the_cli_indexes_a_pdf_whose_outline_nests_1200_deep(tmp_path: Path) -> None:
    deep_outline_pdf(tmp_path / "deep.pdf")
    done = run_cli("index", str(tmp_path / "deep.pdf"))
    assert done.returncode == 0, done.stderr
    assert "1200 TOC entries" in done.stdout
    assert load_index(tmp_path / "deep.pageindex").toc[-1].title == "Heading 1200"


# -- 3. a large index: peak memory ------------------------------------------------------------------------

WORDS = ["revenue", "grew", "by", "four", "percent", "in", "the", "quarter", "while", "costs", "fell"]
WORDS += ["and", "the", "board", "approved", "a", "dividend"]


def write_large_index(folder: Path, size: int, *, words: int = 40, seed: int = 1) -> Path:
    """Write a ``.pageindex`` whose ``document.json`` is about ``size`` bytes, as ``save_index`` lays it out
    (indented by two), a page at a time: 22 nodes a page (a section, its heading, 20 paragraphs of
    ``words`` words, boxed as the PDF text strategy boxes them) and one TOC entry per page."""
    folder.mkdir(parents=True, exist_ok=True)
    chooser = random.Random(seed)
    toc = []
    written = 0
    with open(folder / "document.json", "w", encoding="utf-8") as handle:
        head = json.dumps({"format_version": "1.1", "name": "large", "title": "Large", "extension": "md"})
        handle.write(head[:-1] + ', "pages": [\n')
        index = 0
        while written < size:
            nodes: list[dict[str, Any]] = [
                {"id": f"p{index}-1", "parent_id": None, "type": "section", "description": None},
                {
                    "id": f"p{index}-2",
                    "parent_id": f"p{index}-1",
                    "type": "heading",
                    "level": "h1",
                    "content": f"Section {index + 1}",
                    "bbox": [72, 60, 300, 80],
                },
            ]
            for number in range(3, 23):
                nodes.append(
                    {
                        "id": f"p{index}-{number}",
                        "parent_id": f"p{index}-1",
                        "type": "paragraph",
                        "level": "paragraph",
                        "content": " ".join(chooser.choice(WORDS) for _ in range(words)),
                        "continuation": False,
                        "group_id": None,
                        "bbox": [72, 60 + 30 * number, 540, 80 + 30 * number],
                    }
                )
            page = ("" if index == 0 else ",\n") + json.dumps({"index": index, "nodes": nodes}, indent=2)
            handle.write(page)
            written += len(page)
            toc.append(
                {
                    "id": f"toc-{index + 1}",
                    "title": f"Section {index + 1}",
                    "target_page": index,
                    "target_section_id": f"p{index}-1",
                    "bbox": [72, 60, 300, 80],
                }
            )
            index += 1
        handle.write(f'\n], "source_page_count": {index}, "toc": {json.dumps(toc, indent=2)}}}\n')
    return folder


PEAK_CHILD = """
import io, sys
from extract_thinker_pageindex import inspect
stats = inspect(sys.argv[1], file=io.StringIO())
assert stats["nodes"] > 50_000, stats["nodes"]
with open("/proc/self/status") as status:
    print(next(line.split()[1] for line in status if line.startswith("VmHWM:")))  # KiB
"""


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads the peak from /proc/self/status")
def test_inspecting_a_40_mb_index_peaks_under_six_times_its_size(tmp_path: Path) -> None:
    index = write_large_index(tmp_path / "large.pageindex", 40_000_000)
    size = (index / "document.json").stat().st_size
    done = subprocess.run(
        [sys.executable, "-c", PEAK_CHILD, str(index)], env=ENV, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    # VmHWM, not ru_maxrss: a child's ru_maxrss starts at its parent's resident size (pytest's, here),
    # which the kernel carries over the exec.
    peak = int(done.stdout.split()[-1]) * 1024
    # The interpreter and pydantic take about 30 MB of it, the document's models about 4 times the file:
    # 4.9 times in all. Before, bytes, decoded text, parsed JSON and models were held at once: 6.8 times.
    assert peak < 6 * size, f"peak {peak / 2**20:.0f} MiB for a {size / 2**20:.0f} MiB document.json"


def test_json_that_only_pythons_parser_reads_still_loads(tmp_path: Path) -> None:
    index = save_index(full_document(), tmp_path / "odd.pageindex")
    path = index / "document.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["title"] = "Caf\udcff"  # written as the escape \udcff, a lone surrogate
    data["from_a_later_tool"] = json.loads("[" * 300 + "]" * 300)  # deeper than pydantic-core parses
    path.write_text(json.dumps(data), encoding="utf-8")
    document = load_index(index)
    assert document.title == "Caf\ufffd"
    assert document.pages == full_document().pages


# -- 4. saves the operating system refuses ----------------------------------------------------------------


def long_markdown(path: Path) -> Path:
    """About 600 KB of Markdown: its index does not fit in 256 KiB."""
    sections = [f"## Part {n}\n\n" + "The board approved the dividend. " * 30 for n in range(600)]
    path.write_text("# Long\n\n" + "\n\n".join(sections), encoding="utf-8")
    return path


def test_an_index_onto_a_full_disk_keeps_the_earlier_index(tmp_path: Path, tiny_disk: Path) -> None:
    (tmp_path / "notes.md").write_text(MARKDOWN, encoding="utf-8")
    target = tiny_disk / "notes.pageindex"
    earlier, _ = index_document(tmp_path / "notes.md", output=target)
    before = snapshot(tiny_disk)
    with pytest.raises(
        OutputWriteError, match=r"cannot be written: the disk holding '.*disk' is full"
    ) as info:
        index_document(long_markdown(tmp_path / "long.md"), output=target, overwrite=True)
    message = str(info.value)
    assert "No space left on device" in message and "Free some space" in message
    assert "nothing was replaced" in message
    assert info.value.errno == errno.ENOSPC
    assert isinstance(info.value.__cause__, OSError) and info.value.__cause__.errno == errno.ENOSPC
    assert snapshot(tiny_disk) == before  # the index unchanged, no staging folder
    assert load_index(target).model_dump() == earlier.model_dump()
    # A new output under folders that do not exist yet: the folders made for it are removed again.
    with pytest.raises(OutputWriteError, match="is full"):
        index_document(tmp_path / "long.md", output=tiny_disk / "new" / "deeper" / "long.pageindex")
    assert snapshot(tiny_disk) == before


def test_the_cli_index_onto_a_full_disk_keeps_the_earlier_index(tmp_path: Path, tiny_disk: Path) -> None:
    (tmp_path / "notes.md").write_text(MARKDOWN, encoding="utf-8")
    long_markdown(tmp_path / "long.md")
    assert run_cli("index", str(tmp_path / "notes.md"), "-o", str(tiny_disk)).returncode == 0
    before = snapshot(tiny_disk)
    shutil.copy(tmp_path / "long.md", tmp_path / "notes.md")  # the same output, now too large
    done = run_cli("index", str(tmp_path / "notes.md"), "-o", str(tiny_disk))
    assert done.returncode == 1
    assert "is full (No space left on device); nothing was replaced. Free some space" in done.stderr
    assert "Traceback" not in done.stderr and "unexpected" not in done.stderr
    assert snapshot(tiny_disk) == before
    assert load_index(tiny_disk / "notes.pageindex").title == "Title"


def _refusal(source: Path, output: Path) -> tuple[str, str, int | None]:
    try:
        index_document(source, output=output)
    except (OutputExistsError, OutputWriteError) as exc:
        return type(exc).__name__, str(exc), exc.errno
    return "saved", "", None


def test_an_index_into_a_read_only_folder_is_refused_and_changes_nothing(open_folder: Path) -> None:
    source = open_folder / "notes.md"
    source.write_text(MARKDOWN, encoding="utf-8")
    out = open_folder / "out"
    out.mkdir()
    earlier, _ = index_document(source, output=out / "notes.pageindex")
    out.chmod(0o555)
    before = snapshot(out)
    for output in (out / "notes.pageindex", out / "other.pageindex", out / "new" / "deeper.pageindex"):
        kind, message, number = as_another_user(lambda output=output: _refusal(source, output))
        assert kind == "OutputWriteError", output
        assert f"the folder {str(out)!r} is not writable (Permission denied)" in message
        assert "nothing was replaced. Make it writable, or choose another output path" in message
        assert number == errno.EACCES
    assert snapshot(out) == before
    assert load_index(out / "notes.pageindex").model_dump() == earlier.model_dump()


def _cli_as_user(*args: str) -> tuple[int, str]:
    err = io.StringIO()
    real, sys.stderr = sys.stderr, err
    try:
        return cli_main(list(args)), err.getvalue()
    finally:
        sys.stderr = real


def test_the_cli_index_into_a_read_only_folder_is_refused(open_folder: Path) -> None:
    source = open_folder / "notes.md"
    source.write_text(MARKDOWN, encoding="utf-8")
    out = open_folder / "out"
    out.mkdir()
    index_document(source, output=out / "notes.pageindex")
    out.chmod(0o555)
    before = snapshot(out)
    code, err = as_another_user(lambda: _cli_as_user("index", str(source), "-o", str(out)))
    assert code == 1
    assert "is not writable (Permission denied); nothing was replaced. Make it writable" in err
    assert "Traceback" not in err and "unexpected" not in err
    assert snapshot(out) == before


def test_a_read_only_index_in_a_writable_folder_is_not_replaced(open_folder: Path) -> None:
    """Renaming the index away would work, deleting its files would not: refused before anything."""
    nobody = pwd.getpwnam("nobody") if os.geteuid() == 0 else None
    source = open_folder / "notes.md"
    source.write_text(MARKDOWN, encoding="utf-8")
    target = open_folder / "notes.pageindex"
    earlier, _ = index_document(source, output=target)
    if nobody is not None:
        for path in [target, *target.rglob("*")]:
            os.chown(path, nobody.pw_uid, nobody.pw_gid)
    target.chmod(0o555)
    before = snapshot(open_folder)
    kind, message, _ = as_another_user(lambda: _refusal(source, target))
    assert kind == "OutputWriteError"
    assert f"the folder {str(target)!r} is read-only; nothing was changed" in message
    assert snapshot(open_folder) == before  # no staging folder holding the old files
    assert load_index(target).model_dump() == earlier.model_dump()


@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs holding an index, then remounted read-only: even root cannot write there."""
    with mounted_tmpfs(tmp_path / "ro") as mount_point:
        (tmp_path / "notes.md").write_text(MARKDOWN, encoding="utf-8")
        index_document(tmp_path / "notes.md", output=mount_point / "notes.pageindex")
        subprocess.run(["mount", "-o", "remount,ro", str(mount_point)], check=True)
        yield mount_point


def test_an_index_onto_a_read_only_mount_is_refused(tmp_path: Path, read_only_mount: Path) -> None:
    before = snapshot(read_only_mount)
    done = run_cli("index", str(tmp_path / "notes.md"), "-o", str(read_only_mount))
    assert done.returncode == 1
    assert "is on a read-only file system (Read-only file system); nothing was replaced" in done.stderr
    assert snapshot(read_only_mount) == before
    with pytest.raises(OutputWriteError, match="read-only file system") as info:
        index_document(tmp_path / "notes.md", output=read_only_mount / "other.pageindex")
    assert info.value.errno == errno.EROFS
    assert snapshot(read_only_mount) == before
    assert load_index(read_only_mount / "notes.pageindex").title == "Title"


def test_a_loader_whose_cache_is_read_only_serves_the_index_with_a_warning(open_folder: Path) -> None:
    source = open_folder / "notes.md"
    source.write_text(MARKDOWN, encoding="utf-8")
    cache = open_folder / "cache"
    cache.mkdir(mode=0o555)
    cache.chmod(0o555)

    def load() -> tuple[int, list[str]]:
        import warnings

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pages = DocumentLoaderPageIndex(cache_dir=cache).load(str(source))
        return len(pages), [str(warning.message) for warning in caught]

    count, messages = as_another_user(load)
    assert count >= 1
    assert any("cache could not be written" in message and "not writable" in message for message in messages)
    assert list(cache.iterdir()) == []
