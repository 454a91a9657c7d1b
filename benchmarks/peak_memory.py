"""Peak memory on small inputs that decode or render huge: each one indexed in a fresh process.

The inputs are the ones of tests/test_image_bounds.py (made by its helpers in a temporary folder): a
1 x 59,000,000 PNG, a 59-megapixel transparent PNG, PDFs holding a 32,000 px and a 40,000 x 28,000 px
picture (text strategy), and a PDF with one 7,200 pt page (vision strategy, against the test suite's model
server on 127.0.0.1, and DocumentLoaderPyMuPDF's vision mode). Printed for each: the file's size, the peak
resident memory of the process that indexed it (``ru_maxrss``, which includes the interpreter and the
libraries it imported), and what came out. "issue" is the figure issue 11 gave before the bounds.

``--before-src DIR`` also runs every input against another copy of the package's sources (for instance
``git archive <commit> src | tar -x -C DIR``, then ``DIR/src``), side by side.

Usage: python benchmarks/peak_memory.py [--before-src DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_image_bounds import huge_page_pdf, huge_picture_pdf, zero_png  # noqa: E402

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-src", help="another copy of the package's src/ to measure side by side")
    args = parser.parse_args()
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
