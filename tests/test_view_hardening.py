"""The view against hostile indexes and outputs, for real: an index whose fields point at files elsewhere,
users' own files and folders at the output's names, FIFOs (os.mkfifo), unusable paths, views killed by
SIGKILL mid-write, and a disk that really fills up (a tmpfs)."""

from __future__ import annotations

import base64
import errno
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pymupdf
import pytest
from PIL import Image

from extract_thinker_pageindex import (
    Document,
    DocumentLoadError,
    ImageNode,
    InvalidOptionError,
    OutputExistsError,
    OutputWriteError,
    Page,
    ParagraphNode,
    index_document,
    save_index,
    view_index,
)
from extract_thinker_pageindex.cli import main
from extract_thinker_pageindex.view import images_folder
from extract_thinker_pageindex.view.output import GENERATOR_MARK

SAMPLE_PDF = Path(__file__).resolve().parents[1] / "examples" / "data" / "service-agreement.pdf"
SAMPLE_MD = SAMPLE_PDF.with_suffix(".md")
MARK = ".pageindex-view"
# How long a test waits for a child process to reach a point before it fails (never a timing assertion).
PATIENCE = 120


def snapshot(folder: Path) -> dict[str, object]:
    """Everything under ``folder``: each file's bytes, each folder, FIFO and link (by its target)."""
    found: dict[str, object] = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        if path.is_symlink():
            found[key] = f"link -> {os.readlink(path)}"
        elif path.is_fifo():
            found[key] = "fifo"
        elif path.is_dir():
            found[key] = "folder"
        else:
            found[key] = path.read_bytes()
    return found


def staging_folders(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if ".view-tmp-" in path.name)


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled contract PDF and its page index (PDF text strategy: text nodes with boxes)."""
    folder = tmp_path_factory.mktemp("sample")
    shutil.copy(SAMPLE_PDF, folder / SAMPLE_PDF.name)
    index_document(folder / SAMPLE_PDF.name)
    return folder / "service-agreement.pageindex"


def png(colour: tuple[int, int, int], size: tuple[int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, "PNG")
    return out.getvalue()


def text_only_index(folder: Path, name: str, extension: str, *, boxes: bool = False) -> Path:
    """A page index as a vision model writes it (text without positions) or, with ``boxes``, as the PDF
    text strategy does; its ``name`` is whatever the sender put there."""
    node = ParagraphNode(
        id="p1", content="Text of the shared index.", bbox=(72, 72, 300, 90) if boxes else None
    )
    document = Document(
        name=name, extension=extension, source_page_count=1, pages=[Page(index=0, nodes=[node])]
    )
    index = folder / "report.pageindex"
    save_index(document, index)
    return index


def pictures_of(html: Path) -> list[bytes]:
    """Every picture a view holds: its data: URIs and the files of its pictures folder."""
    text = html.read_text(encoding="utf-8")
    found = [
        base64.b64decode(data) for data in re.findall(r"data:image/[a-z]+;base64,([A-Za-z0-9+/=]+)", text)
    ]
    folder = images_folder(html)
    if folder.is_dir():
        found += [path.read_bytes() for path in folder.iterdir() if path.name != MARK]
    return found


# -- (A) the source is never a path taken from the index ---------------------------------------------------


@pytest.fixture
def secrets(tmp_path: Path) -> dict[str, Path]:
    """Files elsewhere on the machine: a PNG and a one-page PDF, each of a size and colour of its own."""
    folder = tmp_path / "elsewhere" / "secret"
    folder.mkdir(parents=True)
    (folder / "confidential.png").write_bytes(png((201, 13, 77), (64, 48)))
    with pymupdf.open() as pdf:
        page = pdf.new_page(width=123, height=77)
        page.draw_rect(page.rect, color=(0.8, 0.05, 0.3), fill=(0.8, 0.05, 0.3))
        page.insert_text((10, 40), "QUOKKA-SECRET-7781", fontsize=8)
        pdf.save(folder / "confidential.pdf")
    return {"png": folder / "confidential.png", "pdf": folder / "confidential.pdf"}


def assert_secret_not_in(html: Path, secret: Path) -> None:
    data = secret.read_bytes()
    text = html.read_text(encoding="utf-8")
    assert base64.b64encode(data).decode("ascii")[:200] not in text
    assert "QUOKKA" not in text
    secret_size = (64, 48) if secret.suffix == ".png" else (164, 103)  # 123 x 77 pt at 96 dpi
    for picture in pictures_of(html):
        assert data not in picture
        with Image.open(io.BytesIO(picture)) as image:
            assert image.size != secret_size
    if images_folder(html).is_dir():
        assert not [path for path in images_folder(html).iterdir() if path.name.startswith("page-")]


@pytest.mark.parametrize("extension", ["png", "pdf"])
@pytest.mark.parametrize("where", ["absolute", "dot-dot", "beside, by its own name", "current directory"])
@pytest.mark.parametrize("embed_images", [False, True])
def test_an_index_never_chooses_a_file_to_draw(
    tmp_path: Path,
    secrets: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    extension: str,
    where: str,
    embed_images: bool,
) -> None:
    """A shared index whose ``name`` points at a file elsewhere (absolute, ``../..``) or names another
    file beside it or in the current directory: the view draws none of them. Its source is only ever
    ``--source`` or the file named as the index folder, beside it."""
    secret = secrets[extension]
    inbox = tmp_path / "shared" / "inbox"
    inbox.mkdir(parents=True)
    name = {
        "absolute": str(secret.with_suffix("")),
        "dot-dot": "../../elsewhere/secret/confidential",
        "beside, by its own name": "confidential",
        "current directory": "confidential",
    }[where]
    if where == "beside, by its own name":
        shutil.copy(secret, inbox / secret.name)
    if where == "current directory":
        monkeypatch.chdir(secret.parent)
    index = text_only_index(inbox, name, extension)

    html = view_index(index, embed_images=embed_images, output=tmp_path / "out" / "view.html")
    assert_secret_not_in(html, secret)
    text = html.read_text(encoding="utf-8")
    assert (
        "Pages shown as text:" in text
        and f"&#x27;report.{extension}&#x27; (named as the index folder)" in text
    )

    # The command line too.
    out = tmp_path / "cli.html"
    assert main(["view", str(index), "-o", str(out)] + (["--embed-images"] if embed_images else [])) == 0
    assert_secret_not_in(out, secret)


@pytest.mark.parametrize("extension", ["png", "pdf"])
def test_an_index_with_placed_text_pointing_elsewhere_is_refused(
    tmp_path: Path, secrets: dict[str, Path], extension: str
) -> None:
    """An index with positions of text needs its source: one whose name points at another file is refused
    (it was drawn from that file before), and nothing is written."""
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    index = text_only_index(inbox, str(secrets[extension].with_suffix("")), extension, boxes=True)
    with pytest.raises(DocumentLoadError, match=rf"'report\.{extension}' \(named as the index folder\)"):
        view_index(index, output=tmp_path / "view.html", embed_images=True)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["elsewhere", "inbox"]


def test_the_file_named_as_the_index_folder_is_drawn(tmp_path: Path, secrets: dict[str, Path]) -> None:
    """``report.pageindex`` is drawn from ``report.png`` beside it, whatever its name says; ``source=``
    draws from the file given."""
    index = text_only_index(tmp_path, str(secrets["png"].with_suffix("")), "png")
    (tmp_path / "report.png").write_bytes(png((10, 200, 30), (90, 70)))
    html = view_index(index, embed_images=True)
    sizes = [Image.open(io.BytesIO(picture)).size for picture in pictures_of(html)]
    assert sizes == [(90, 70)]
    assert_secret_not_in(html, secrets["png"])
    given = tmp_path / "given.png"
    given.write_bytes(png((0, 0, 255), (50, 40)))
    html = view_index(index, source=given, embed_images=True, output=tmp_path / "given.html")
    assert [Image.open(io.BytesIO(picture)).size for picture in pictures_of(html)] == [(50, 40)]


# -- (B) output: what the view did not make is never deleted or written over --------------------------------


def _jpeg() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(out, "JPEG")
    return out.getvalue()


FOREIGN_FOLDERS = {
    "a picture of the user's": {"page-1.png": png((1, 2, 3), (4, 4))},
    "empty": {},
    "the view's own file names": {f"page-{n:04d}.jpg": _jpeg() for n in range(1, 5)},
    "a mark listing files, and a file of the user's": {
        MARK: json.dumps(
            {"generator": "extract-thinker-pageindex view", "files": ["page-0001.jpg"]}
        ).encode(),
        "page-0001.jpg": _jpeg(),
        "notes.txt": b"mine",
    },
    "a mark of another program": {MARK: b'{"generator": "something else", "files": []}'},
}


@pytest.mark.parametrize("contents", FOREIGN_FOLDERS.values(), ids=FOREIGN_FOLDERS.keys())
@pytest.mark.parametrize("embed_images", [False, True])
def test_a_pictures_folder_the_view_did_not_make_is_left_alone(
    sample: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    contents: dict[str, bytes],
    embed_images: bool,
) -> None:
    folder = tmp_path / "out_files"
    folder.mkdir()
    for name, data in contents.items():
        (folder / name).write_bytes(data)
    before = snapshot(tmp_path)
    with pytest.raises(
        OutputExistsError, match=r"out_files' exists and is not a folder of page pictures"
    ) as info:
        view_index(sample, output=tmp_path / "out.html", embed_images=embed_images)
    assert "move it away or choose another output name" in str(info.value)
    assert main(["view", str(sample), "-o", str(tmp_path / "out.html")]) == 1
    assert "is not a folder of page pictures written by view" in capsys.readouterr().err
    assert snapshot(tmp_path) == before


def test_a_pictures_folder_that_is_a_link_or_a_file_is_left_alone(sample: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "page-0001.jpg").write_bytes(_jpeg())
    (tmp_path / "out_files").symlink_to(mine)
    (tmp_path / "b_files").write_bytes(b"a file")
    before = snapshot(tmp_path)
    for output in ("out.html", "b.html"):
        with pytest.raises(OutputExistsError, match="not a folder of page pictures"):
            view_index(sample, output=tmp_path / output)
    assert snapshot(tmp_path) == before


def test_a_users_pictures_folder_beside_an_earlier_view_is_left_alone(sample: Path, tmp_path: Path) -> None:
    """An embedded view has no folder; a folder of the user's put at its name later is not the view's."""
    out = tmp_path / "out.html"
    view_index(sample, output=out, embed_images=True)
    (tmp_path / "out_files").mkdir()
    (tmp_path / "out_files" / "page-1.png").write_bytes(b"mine")
    before = snapshot(tmp_path)
    with pytest.raises(OutputExistsError, match=r"has no \.pageindex-view mark"):
        view_index(sample, output=out)
    assert snapshot(tmp_path) == before


USERS_PAGES = {
    "the mark in its text": f"<!DOCTYPE html><html><body><p>Views carry {GENERATOR_MARK}.</p>",
    "the mark in its head, after its own tags": (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Mine</title>{GENERATOR_MARK}'
    ),
    "the mark first, then other text": f"{GENERATOR_MARK}<p>My notes</p>",
    "empty": "",
}


@pytest.mark.parametrize("page", USERS_PAGES.values(), ids=USERS_PAGES.keys())
def test_only_a_file_that_opens_with_the_views_header_is_replaced(
    sample: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], page: str
) -> None:
    mine = tmp_path / "notes.html"
    mine.write_text(page, encoding="utf-8")
    with pytest.raises(OutputExistsError, match="is not a view written by this command"):
        view_index(sample, output=mine)
    assert main(["view", str(sample), "-o", str(mine)]) == 1
    assert "its head is not the view's generated header" in capsys.readouterr().err
    assert mine.read_text(encoding="utf-8") == page
    assert sorted(path.name for path in tmp_path.iterdir()) == ["notes.html"]


def test_an_output_that_is_a_fifo_is_refused_without_blocking(sample: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "out.html"
    os.mkfifo(fifo)
    # First in a child process, so that a view that blocked would fail the test, not hang it.
    done = subprocess.run(
        [sys.executable, "-m", "extract_thinker_pageindex.cli", "view", str(sample), "-o", str(fifo)],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    assert done.returncode == 1, done.stderr
    assert "is a named pipe (FIFO), not a file" in done.stderr and "Traceback" not in done.stderr
    with pytest.raises(OutputExistsError, match=r"is a named pipe \(FIFO\), not a file; name an HTML file"):
        view_index(sample, output=fifo)
    # A FIFO at the pictures folder's name, beside a real view: not the view's, left alone.
    fifo.unlink()
    view_index(sample, output=fifo, embed_images=True)
    os.mkfifo(tmp_path / "out_files")
    with pytest.raises(OutputExistsError, match="it is not a folder"):
        view_index(sample, output=fifo)
    assert (tmp_path / "out_files").is_fifo()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out.html", "out_files"]


UNUSABLE = {
    "NUL": ("view\0.html", InvalidOptionError, "holds a NUL character", 2),
    "5,000 characters": ("v" * 5000 + ".html", InvalidOptionError, "too long for the file system", 2),
    "a pictures folder name over 255 bytes": (
        "v" * 250 + ".html",
        InvalidOptionError,
        "shorter output name",
        2,
    ),
    "/proc/self": ("/proc/self/view.html", OutputWriteError, "cannot be written", 1),
    "/proc/self/fd": ("/proc/self/fd/view.html", OutputWriteError, "cannot be written", 1),
    "/proc/self/fd/1, a link": ("/proc/self/fd/1", OutputExistsError, "symbolic link", 1),
    "/proc/self/environ": (
        "/proc/self/environ",
        OutputExistsError,
        "is not a view written by this command",
        1,
    ),
    "/proc/self/task, a folder": ("/proc/self/task", OutputExistsError, "is a folder", 1),
}


@pytest.mark.parametrize(("output", "error", "message", "code"), UNUSABLE.values(), ids=UNUSABLE.keys())
def test_an_unusable_output_path_gives_the_projects_error(
    sample: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    output: str,
    error: type[Exception],
    message: str,
    code: int,
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(error, match=re.escape(message)) as info:
        view_index(sample, output=output)
    assert type(info.value) is error
    assert len(str(info.value)) < 400
    assert main(["view", str(sample), "-o", output]) == code
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and "unexpected" not in err
    assert list(tmp_path.iterdir()) == []


# -- writing the same view again -------------------------------------------------------------------------


def _markdown_index(folder: Path) -> Path:
    shutil.copy(SAMPLE_MD, folder / SAMPLE_MD.name)
    index_document(folder / SAMPLE_MD.name)
    return folder / "service-agreement.pageindex"


def _vision_index(folder: Path) -> Path:
    """A vision index whose source is gone: its pages as text, with the crops it saved (<node id>.png)."""
    nodes = [
        ParagraphNode(id="p1", content="Revenue grew by a third."),
        ImageNode(
            id="i1",
            kind="chart",
            bbox=(10, 10, 90, 60),
            description="bars",
            image_data=png((255, 0, 0), (40, 30)),
        ),
        ImageNode(id="i2", kind="photo", bbox=(10, 70, 90, 90), image_data=png((0, 255, 0), (20, 10))),
    ]
    document = Document(name="scan", extension="pdf", source_page_count=1, pages=[Page(index=0, nodes=nodes)])
    save_index(document, folder / "scan.pageindex")
    return folder / "scan.pageindex"


def _image_index(folder: Path) -> Path:
    (folder / "photo.png").write_bytes(png((200, 200, 0), (120, 80)))
    node = ImageNode(id="i1", kind="chart", bbox=(10, 10, 60, 40), description="a chart")
    document = Document(
        name="photo", extension="png", source_page_count=1, pages=[Page(index=0, nodes=[node])]
    )
    save_index(document, folder / "photo.pageindex")
    return folder / "photo.pageindex"


def _pdf_index(folder: Path) -> Path:
    shutil.copy(SAMPLE_PDF, folder / SAMPLE_PDF.name)
    index_document(folder / SAMPLE_PDF.name)
    return folder / "service-agreement.pageindex"


KINDS = {
    "pdf with pictures": (_pdf_index, [f"page-{n:04d}.jpg" for n in range(1, 5)]),
    "markdown": (_markdown_index, None),
    "vision without its source": (_vision_index, ["i1.png", "i2.png"]),
    "image": (_image_index, ["page-0001.png"]),
}


@pytest.mark.parametrize(("make", "files"), KINDS.values(), ids=KINDS.keys())
@pytest.mark.parametrize("embedded", [(False, False), (True, True), (False, True), (True, False)], ids=str)
def test_the_same_view_written_again_replaces_both(
    tmp_path: Path, make: object, files: list[str] | None, embedded: tuple[bool, bool]
) -> None:
    index = make(tmp_path)  # type: ignore[operator]
    out = tmp_path / "views" / "view.html"
    for embed_images, query in zip(embedded, (None, "revenue termination chart"), strict=True):
        assert view_index(index, output=out, embed_images=embed_images, query=query) == out
    assert 'id="matches"' in out.read_text(encoding="utf-8")  # the second view
    folder = images_folder(out)
    if embedded[-1] or files is None:
        assert sorted(path.name for path in out.parent.iterdir()) == ["view.html"]
    else:
        assert sorted(path.name for path in folder.iterdir()) == sorted([MARK, *files])
        mark = json.loads((folder / MARK).read_text(encoding="utf-8"))
        assert mark["generator"] == "extract-thinker-pageindex view" and sorted(mark["files"]) == sorted(
            files
        )
        assert sorted(path.name for path in out.parent.iterdir()) == ["view.html", "view_files"]
    assert main(["view", str(index), "-o", str(out)]) == 0  # and a third time, by the command
    assert staging_folders(out.parent) == []


# -- staging folders of killed views --------------------------------------------------------------------


def _long_pdf_index(folder: Path, pages: int) -> tuple[Path, Path]:
    """A long PDF and a page index of it (text without positions, as a vision model writes)."""
    source = folder / "long.pdf"
    with pymupdf.open() as pdf:
        for number in range(pages):
            pdf.new_page().insert_text((72, 72), f"Page {number + 1}", fontsize=12)
        pdf.save(source)
    document = Document(
        name="long",
        extension="pdf",
        source_page_count=pages,
        pages=[
            Page(index=n, nodes=[ParagraphNode(id=f"p{n}", content=f"Page {n + 1}")]) for n in range(pages)
        ],
    )
    save_index(document, folder / "long.pageindex")
    return folder / "long.pageindex", source


def _start_view(index: Path, out: Path) -> subprocess.Popen[bytes]:
    script = (
        "import sys; from extract_thinker_pageindex import view_index; "
        "view_index(sys.argv[1], output=sys.argv[2], dpi=200)"
    )
    return subprocess.Popen(
        [sys.executable, "-c", script, str(index), str(out)],
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _wait_for_first_picture(child: subprocess.Popen[bytes], folder: Path) -> str:
    """The name of ``child``'s staging folder, once it holds a page picture (the view is mid-write)."""
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        for name in staging_folders(folder):
            if (folder / name / "files" / "page-0001.jpg").exists():
                return name
        if child.poll() is not None:
            errors = child.stderr.read().decode(errors="replace") if child.stderr else ""
            raise AssertionError(f"the view ended before it was caught mid-write: {errors}")
        time.sleep(0.005)
    raise AssertionError("the view never started writing pictures")


def test_a_killed_views_staging_folder_is_removed_by_the_next_view(tmp_path: Path) -> None:
    index, _ = _long_pdf_index(tmp_path, pages=150)
    out = tmp_path / "out" / "long.html"
    out.parent.mkdir()
    child = _start_view(index, out)
    try:
        staging = _wait_for_first_picture(child, out.parent)
        os.kill(child.pid, signal.SIGSTOP)  # a live view, only slow: its folder is not taken
        view_index(index, output=out, dpi=10)
        assert staging_folders(out.parent) == [staging]
        assert (out.parent / staging / "files" / "page-0001.jpg").is_file()
        os.kill(child.pid, signal.SIGKILL)  # now killed mid-write
        child.wait()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert staging_folders(out.parent) == [staging]  # left behind by the killed view
    view_index(index, output=out, dpi=10)
    assert staging_folders(out.parent) == []
    assert sorted(path.name for path in out.parent.iterdir()) == ["long.html", "long_files"]
    assert len(list(images_folder(out).glob("page-*.jpg"))) == 150


def _start_time() -> int:
    return int(Path("/proc/self/stat").read_bytes().rsplit(b")", 1)[1].split()[19])


def test_stale_staging_folders_go_by_their_writer_or_their_age(sample: Path, tmp_path: Path) -> None:
    """Leftover staging folders beside the output: those whose writer is gone, or that nobody touched for
    a long time when their writer cannot be asked (another host), are removed; a live writer's, another
    output's, a link and a user's hidden folder are kept."""
    ended = subprocess.Popen(["true"])  # a process that has ended (and was reaped)
    ended.wait()
    old = time.time() - 3 * 3600
    here = socket.gethostname()
    cases = {
        ".out.html.view-tmp-0123456789ab": ({"host": "another-machine", "pid": 1, "started": 1}, old, False),
        ".out.html.view-tmp-aaaaaaaaaaaa": ({"host": "another-machine", "pid": 1, "started": 1}, None, True),
        ".out.html.view-tmp-bbbbbbbbbbbb": (None, old, False),  # killed before it wrote its note
        ".out.html.view-tmp-cccccccccccc": ({"host": here, "pid": ended.pid, "started": 1}, None, False),
        ".out.html.view-tmp-dddddddddddd": (
            {"host": here, "pid": os.getpid(), "started": _start_time()},
            old,
            True,
        ),
        ".out.html.view-tmp-eeeeeeeeeeee": ({"host": here, "pid": os.getpid(), "started": 7}, None, False),
        ".out.html.view-tmp-ffffffffffff": ({"host": here, "pid": -1, "started": 1}, None, True),
        ".out.html.notes": (None, old, True),
        ".other.html.view-tmp-0123456789ab": (None, old, True),
    }
    for name, (writer, mtime, _) in cases.items():
        folder = tmp_path / name
        (folder / "files").mkdir(parents=True)
        (folder / "files" / "page-0001.jpg").write_bytes(_jpeg())
        if writer is not None:
            (folder / "writer.json").write_text(json.dumps(writer), encoding="utf-8")
        if mtime is not None:
            for path in (folder / "files" / "page-0001.jpg", folder / "files", folder):
                os.utime(path, (mtime, mtime))
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("mine", encoding="utf-8")
    (tmp_path / ".out.html.view-tmp-999999999999").symlink_to(mine)
    os.utime(tmp_path / ".out.html.view-tmp-999999999999", (old, old), follow_symlinks=False)

    view_index(sample, output=tmp_path / "out.html")
    kept = sorted(name for name, (_, _, keep) in cases.items() if keep)
    assert sorted(path.name for path in tmp_path.iterdir() if path.name.startswith(".")) == sorted(
        [*kept, ".out.html.view-tmp-999999999999"]
    )
    assert (mine / "keep.txt").read_text(encoding="utf-8") == "mine"


# -- a write that fails ---------------------------------------------------------------------------------


def test_a_view_that_fills_the_disk_keeps_the_earlier_view(
    sample: Path, tiny_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tiny_disk / "view.html"
    view_index(sample, output=out, dpi=10)  # small pictures: it fits
    before = snapshot(tiny_disk)
    with pytest.raises(
        OutputWriteError, match=r"is full \(No space left on device\); nothing was replaced"
    ) as info:
        view_index(sample, output=out, dpi=150, query="fees")  # about 400 KB of pictures: it does not
    assert isinstance(info.value.__cause__, OSError)
    assert info.value.errno == errno.ENOSPC
    assert snapshot(tiny_disk) == before
    assert main(["view", str(sample), "-o", str(out), "--dpi", "150"]) == 1
    assert "No space left on device" in capsys.readouterr().err
    assert snapshot(tiny_disk) == before
    nested = tiny_disk / "new" / "deeper" / "view.html"
    with pytest.raises(OutputWriteError, match="No space left on device"):
        view_index(sample, output=nested, dpi=150)
    assert snapshot(tiny_disk) == before  # the folders made for it are gone again
