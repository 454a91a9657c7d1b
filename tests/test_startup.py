"""What reading a PDF imports: PyMuPDF without its layout model (onnxruntime) or pymupdf4llm, which
PyMuPDF 2.0's own ``import pymupdf`` loads; the layout model only when the layout mode asks for it.

Each case runs in a fresh interpreter and reads ``sys.modules`` there: what a module import costs is a
wall-clock figure for benchmarks/import_time.py, not for a test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import asdict
from pathlib import Path

import pytest

from extract_thinker_pageindex import index_document
from extract_thinker_pageindex.ocr.settings import OcrSettings
from extract_thinker_pageindex.ocr.worker import read_frame, write_frame

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "data" / "service-agreement.pdf"
#: What PyMuPDF 2.0 imports by itself and reading a PDF's text layer never uses.
LAYOUT_MODULES = ("pymupdf.layout", "onnxruntime", "pymupdf4llm")

#: Appended to each script: which of PyMuPDF's modules the process holds, as one JSON line.
REPORT = """
import json, sys
names = ("pymupdf", "pymupdf.layout", "onnxruntime", "pymupdf4llm", "litellm")
print("MODULES " + json.dumps({name: name in sys.modules for name in names}), file=sys.stderr)
"""


def _env() -> dict[str, str]:
    return {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def _run(code: str, cwd: Path, stdin: bytes = b"") -> tuple[str, dict[str, bool]]:
    """Run ``code`` then ``REPORT`` in a fresh interpreter: its standard output, and the modules it held."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code) + REPORT],
        input=stdin,
        capture_output=True,
        env=_env(),
        cwd=cwd,
        timeout=180,
    )
    stderr = result.stderr.decode(errors="replace")
    assert result.returncode == 0, stderr[-3000:]
    report = [line for line in stderr.splitlines() if line.startswith("MODULES ")]
    assert report, stderr[-3000:]
    return result.stdout.decode(errors="replace"), json.loads(report[-1].removeprefix("MODULES "))


def _cli(argv: list[str]) -> str:
    return f"""
        import contextlib, io
        from extract_thinker_pageindex.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                code = main({argv!r})
            except SystemExit as exc:
                code = exc.code
        print(code, out.getvalue())
        """


def _assert_no_layout(modules: dict[str, bool]) -> None:
    assert modules["pymupdf"], "the PDF was read with PyMuPDF"
    assert [name for name in LAYOUT_MODULES if modules[name]] == []


# -- commands and the loader: no layout model ----------------------------------------------------------


def test_search_of_a_pdf_imports_no_layout_model(tmp_path: Path) -> None:
    out, modules = _run(_cli(["search", str(SAMPLE), "-q", "termination penalty"]), tmp_path)

    assert out.startswith("0 ") and "[penalty]" in out
    assert "pymupdf_layout" not in out  # PyMuPDF's "consider the layout package" line never shows
    _assert_no_layout(modules)
    assert modules["litellm"] is False


def test_index_of_a_pdf_without_a_model_imports_no_layout_model(tmp_path: Path) -> None:
    out, modules = _run(_cli(["index", str(SAMPLE), "-o", "out"]), tmp_path)

    assert out.startswith("0 ") and "4 page(s)" in out
    _assert_no_layout(modules)


def test_search_of_a_saved_index_imports_no_pymupdf(tmp_path: Path) -> None:
    _, written = index_document(SAMPLE, tmp_path / "out")

    out, modules = _run(_cli(["search", str(written), "-q", "termination penalty"]), tmp_path)

    assert "[penalty]" in out
    assert not any(modules.values()), modules


def test_loader_on_a_born_digital_pdf_imports_no_layout_model(tmp_path: Path) -> None:
    code = f"""
        from extract_thinker_pageindex import DocumentLoaderPyMuPDF
        plain = DocumentLoaderPyMuPDF().load({str(SAMPLE)!r})
        tables = DocumentLoaderPyMuPDF(tables=True).load({str(SAMPLE)!r})
        print(len(plain), [len(page["tables"]) for page in tables])
        """

    out, modules = _run(code, tmp_path)

    pages, tables = out.split(maxsplit=1)
    assert pages == "4" and tables.strip() == "[0, 0, 1, 0]"  # the table finder ran, without the model
    _assert_no_layout(modules)


def test_an_ocr_worker_starts_without_the_layout_model(tmp_path: Path) -> None:
    frames = tmp_path / "frames"
    with frames.open("wb") as stream:
        write_frame(stream, {"source": str(SAMPLE), "password": None, "settings": asdict(OcrSettings())})
        write_frame(stream, None)  # no page: the worker opens the PDF, says it is ready, and stops
    code = """
        from extract_thinker_pageindex.ocr.worker import main
        main()
        """

    answers = tmp_path / "answers"
    with frames.open("rb") as requests, answers.open("wb") as replies:
        result = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code) + REPORT],
            stdin=requests,
            stdout=replies,
            stderr=subprocess.PIPE,
            env=_env(),
            cwd=tmp_path,
            timeout=180,
        )

    stderr = result.stderr.decode(errors="replace")
    assert result.returncode == 0, stderr[-3000:]
    with answers.open("rb") as stream:
        assert read_frame(stream)[0] == "ready"
    modules = json.loads(next(line for line in stderr.splitlines() if line.startswith("MODULES "))[8:])
    _assert_no_layout(modules)


# -- the layout mode: the model loads when asked for ---------------------------------------------------


def test_the_layout_mode_loads_and_uses_the_layout_model(tmp_path: Path) -> None:
    code = f"""
        import sys
        from extract_thinker_pageindex.errors import UnsupportedFormatError
        from extract_thinker_pageindex.pdf.opening import PYMUPDF_LOCK, load_pymupdf_layout, open_pdf
        from extract_thinker_pageindex.tables import find_page_tables
        with open_pdf({str(SAMPLE)!r}) as document, PYMUPDF_LOCK:
            page = document[2]
            plain = len(find_page_tables(page))
            before = [name for name in ("pymupdf.layout", "onnxruntime") if name in sys.modules]
            try:
                load_pymupdf_layout()
                gated = len(page.get_layout() or [])
            except UnsupportedFormatError:
                gated = None
            analysed = page.layout_information is not None
        if gated is None:
            print("no layout model")
        else:
            import pymupdf
            import pymupdf4llm  # after the layout model: pymupdf4llm runs in its layout mode
            layout = callable(pymupdf._get_layout)
            print(plain, before, gated >= 0, analysed, layout, pymupdf4llm._use_layout)
        """

    out, modules = _run(code, tmp_path)

    if out.strip() == "no layout model":
        pytest.skip("this PyMuPDF has no layout model (PyMuPDF 1.x without pymupdf-layout)")
    # The table was found without the model, which loaded only when asked for, and analysed the page.
    assert out.split() == ["1", "[]", "True", "True", "True", "True"]
    assert all(modules[name] for name in LAYOUT_MODULES)


def test_pymupdf4llm_imported_after_this_package_has_its_layout_mode(tmp_path: Path) -> None:
    # The add-ons are kept out of the first import of PyMuPDF only: a later import of pymupdf4llm loads
    # them as usual, and its layout mode is on as it would be without this package.
    code = f"""
        import importlib.util
        from extract_thinker_pageindex.pdf.opening import open_pdf
        with open_pdf({str(SAMPLE)!r}) as document:
            pass
        if None in (importlib.util.find_spec("pymupdf4llm"), importlib.util.find_spec("pymupdf.layout")):
            print("absent")
        else:
            import pymupdf4llm
            print(pymupdf4llm._use_layout)
        """

    out, modules = _run(code, tmp_path)

    if out.strip() == "absent":
        pytest.skip("pymupdf4llm or PyMuPDF's layout model is not installed")
    assert out.strip() == "True"
    assert all(modules[name] for name in LAYOUT_MODULES)
