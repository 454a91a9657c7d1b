"""Peak memory on small inputs that decode or render huge: each one indexed in a fresh process.

The inputs are the ones of tests/test_image_bounds.py (made by its helpers in a temporary folder): a
1 x 59,000,000 PNG, a 59-megapixel transparent PNG, PDFs holding a 32,000 px and a 40,000 x 28,000 px
picture (text strategy), and a PDF with one 7,200 pt page (vision strategy, against the test suite's model
server on 127.0.0.1, and DocumentLoaderPyMuPDF's vision mode). Printed for each: the file's size, the peak
resident memory of the process that indexed it (``ru_maxrss``, which includes the interpreter and the
libraries it imported), and what came out. "issue" is the figure issue 11 gave before the bounds.

``--before-src DIR`` also runs every input against another copy of the package's sources (for instance
``git archive <commit> src | tar -x -C DIR``, then ``DIR/src``), side by side.

``--saved-index MB`` measures saved indexes instead: it writes ``document.json`` files of about MB
megabytes (``write_large_index`` of tests/test_saved_index_hardening.py: pages of a section, a heading and
20 boxed paragraphs, of 40 words and, densest, of 2 words), then ``load_index``, ``inspect``, ``search``
and ``view`` of each in a fresh process, and ``view`` again under a 2 GiB address-space limit
(``ulimit -v``). The peak is the process's ``VmHWM``.

Usage: python benchmarks/peak_memory.py [--before-src DIR] [--saved-index MB]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_image_bounds import huge_page_pdf, huge_picture_pdf, zero_png  # noqa: E402
from test_saved_index_hardening import write_large_index  # noqa: E402

SERVER = ROOT / "tests" / "llm_server.py"
ANSWER = json.dumps({"nodes": [{"type": "paragraph", "id": "p", "content": "A poster."}]})

# What each child does with its input; it sets OUTCOME to a short description of the result.
CHILD = """
import json, resource, struct, sys
kind, path = sys.argv[1], sys.argv[2]


def png_size(data):
    return "%d x %d" % struct.unpack(">II", data[16:24])  # from the header: some are too big to open


try:
    if kind == "baseline":
        import litellm, pymupdf, PIL.Image
        from extract_thinker_pageindex import build_index
        from extract_thinker_pageindex.strategies import pdf_text, vision
        OUTCOME = "imports only: litellm, PyMuPDF, Pillow, the builders"
    elif kind == "image":
        from extract_thinker_pageindex import build_index
        document = build_index(path, model="openai/bench", abstract=False, title="Image")
        OUTCOME = f"indexed, {len(document.pages[0].nodes)} node(s)"
    elif kind == "text":
        from extract_thinker_pageindex import ImageNode, build_index
        document = build_index(path, strategy="text")
        sizes = [
            png_size(node.image_data)
            for page in document.pages for node in page.nodes
            if isinstance(node, ImageNode) and node.image_data
        ]
        OUTCOME = "pictures " + ", ".join(sizes) if sizes else "no picture"
    elif kind == "vision":
        from extract_thinker_pageindex import build_index
        document = build_index(path, strategy="vision", model="openai/bench", abstract=False)
        OUTCOME = f"indexed, {len(document.pages)} page(s)"
    else:
        from extract_thinker_pageindex import DocumentLoaderPyMuPDF
        loader = DocumentLoaderPyMuPDF()
        loader.set_vision_mode(True)
        (page,) = loader.load(path)
        OUTCOME = "page image " + png_size(page["image"])
except Exception as exc:
    OUTCOME = f"{type(exc).__name__}: {str(exc)[:70]}"
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KB, bytes on macOS
peak /= 1024 * 1024 if sys.platform == "darwin" else 1024
print(json.dumps({"peak_mb": peak, "outcome": OUTCOME}))
"""


def measure(kind: str, path: Path, source: str | None) -> tuple[float, str]:
    """Peak resident memory (MB) and outcome of one input indexed in a fresh process."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [source, env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, kind, str(path)], capture_output=True, text=True, env=env, timeout=900
    )
    if done.returncode != 0:
        return float("nan"), f"process failed: {done.stderr.strip().splitlines()[-1:]}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return float(result["peak_mb"]), str(result["outcome"])


# What each child does with a saved index; the peak is read from /proc (a child's ru_maxrss would start
# at its parent's size).
INDEX_CHILD = """
import io, json, resource, sys
kind, path, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
if limit:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
try:
    if kind == "load":
        from extract_thinker_pageindex import load_index
        OUTCOME = f"{sum(1 for _ in load_index(path).iter_nodes()):,} nodes"
    elif kind == "inspect":
        from extract_thinker_pageindex.cli import main
        sys.stdout = io.StringIO()
        OUTCOME = f"exit {main(['inspect', path])}"
    elif kind == "search":
        from extract_thinker_pageindex.cli import main
        sys.stdout = io.StringIO()
        OUTCOME = f"exit {main(['search', path, '-q', 'dividend board'])}"
    else:
        import os
        from extract_thinker_pageindex import view_index
        written = view_index(path, output=f"{path}.{os.getpid()}.html")
        OUTCOME = f"{written.stat().st_size / 2**20:,.0f} MiB of HTML"
        written.unlink()
except MemoryError:
    OUTCOME = "MemoryError"
except Exception as exc:
    OUTCOME = f"{type(exc).__name__}: {str(exc)[:60]}"
sys.stdout = sys.__stdout__
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
print(json.dumps({"peak_mb": peak, "outcome": OUTCOME}))
"""

#: The address-space limit ``view`` is run under, as ``ulimit -v 2097152`` sets it.
VIEW_LIMIT = 2 << 30


def measure_index(kind: str, path: Path, source: str | None, limit: int = 0) -> tuple[float, str]:
    """Peak resident memory (MB) and outcome of one command on a saved index, in a fresh process."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [source, env.get("PYTHONPATH")]))
    command = [sys.executable, "-c", INDEX_CHILD, kind, str(path), str(limit)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
    if done.returncode != 0:
        return float("nan"), f"process failed: {done.stderr.strip().splitlines()[-1:]}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return float(result["peak_mb"]), str(result["outcome"])


def saved_indexes(megabytes: float, before: str | None) -> None:
    """Print the peak memory of loading, inspecting, searching and viewing large saved indexes."""
    with tempfile.TemporaryDirectory() as name:
        header = f"{'document.json':26} {'command':18} {'size':>8}"
        if before:
            header += f" {'before MB':>10} {'x':>5} {'before outcome':28}"
        print(header + f" {'after MB':>9} {'x':>5}  outcome")
        for words in (40, 2):
            index = write_large_index(Path(name) / f"w{words}.pageindex", int(megabytes * 1e6), words=words)
            size = (index / "document.json").stat().st_size / 2**20
            runs = [("load", "load_index", 0), ("inspect", "inspect", 0), ("search", "search", 0)]
            runs += [("view", "view", 0), ("view", "view, ulimit -v 2G", VIEW_LIMIT)]
            for kind, label, limit in runs:
                line = f"{f'{words}-word paragraphs':26} {label:18} {size:6.0f} M"
                if before:
                    peak, outcome = measure_index(kind, index, before, limit)
                    line += f" {peak:10.0f} {peak / size:5.1f} {outcome[:28]:28}"
                peak, outcome = measure_index(kind, index, None, limit)
                print(line + f" {peak:9.0f} {peak / size:5.1f}  {outcome}", flush=True)
            shutil.rmtree(index)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-src", help="another copy of the package's src/ to measure side by side")
    parser.add_argument(
        "--saved-index", type=float, metavar="MB", help="measure saved indexes of about MB megabytes instead"
    )
    args = parser.parse_args()
    if args.saved_index is not None:
        saved_indexes(args.saved_index, args.before_src)
        return
    command = [sys.executable, str(SERVER), "--answer", ANSWER]
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        os.environ["OPENAI_API_BASE"] = server.stdout.readline().strip()
        os.environ["OPENAI_API_KEY"] = "sk-benchmark"
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            inputs = [
                ("(nothing: the imports alone)", "baseline", Path(__file__), ""),
                ("1 x 59,000,000 px PNG", "image", zero_png(folder / "strip.png", 1, 59_000_000), "3 GB"),
                (
                    "7,680 x 7,680 transparent PNG",
                    "image",
                    zero_png(folder / "clear.png", 7_680, 7_680, color_type=6),
                    "",
                ),
                (
                    "PDF, 32,000 px picture (text)",
                    "text",
                    huge_picture_pdf(folder / "p32k.pdf", [(32_000, 32_000)]),
                    "2.3 GB",
                ),
                (
                    "PDF, 40,000 x 28,000 px picture (text)",
                    "text",
                    huge_picture_pdf(folder / "p40k.pdf", [(40_000, 28_000)]),
                    "FzErrorLimit",
                ),
                ("PDF, one 7,200 pt page (vision)", "vision", huge_page_pdf(folder / "poster.pdf"), "2.5 GB"),
                ("the same, loader vision mode", "loader", folder / "poster.pdf", ""),
            ]
            fedex = ROOT.parent / "shared" / "eval" / "structure" / "pdfs" / "FEDEX_2023_annualreport.pdf"
            if fedex.is_file():
                inputs.append(("FEDEX_2023_annualreport.pdf (text)", "text", fedex, "DocumentLoadError"))
            header = f"{'input':40} {'size':>9} {'issue':>17}"
            if args.before_src:
                header += f" {'before MB':>10} {'before outcome':40}"
            print(header + f" {'after MB':>9}  outcome")
            for label, kind, path, issue in inputs:
                size = path.stat().st_size
                line = f"{label:40} {size / 1024:7.0f} K {issue:>17}"
                if args.before_src:
                    peak, outcome = measure(kind, path, args.before_src)
                    line += f" {peak:10.0f} {outcome[:40]:40}"
                peak, outcome = measure(kind, path, None)
                print(line + f" {peak:9.0f}  {outcome}", flush=True)
    finally:
        server.communicate(timeout=30)  # closing its standard input stops it


if __name__ == "__main__":
    main()
