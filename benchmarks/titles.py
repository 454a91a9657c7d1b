"""PDF titles without a model, on every eval set: the metadata title, what the page index takes, and what the
rule before it took (the metadata title unless it named a file, else the first top-level heading).

There is no reference title, so the table is for reading: each row shows the three side by side, and the
counts per set say how often the metadata was refused (an identifier, a job name, a generic word) and where
the title then came from (the first page's largest text, or the first top-level heading).

Usage: python benchmarks/titles.py [DATA_DIR ...]   (each holds pdfs/; default every set in ../shared/eval)
"""

from __future__ import annotations

import argparse
import os
import warnings
from collections import Counter
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from extract_thinker_pageindex import build_index
from extract_thinker_pageindex.indexing import _first_top_heading
from extract_thinker_pageindex.pdf.opening import load_pymupdf
from extract_thinker_pageindex.strategies.pdf_structure import FILENAME_TITLE

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"


def _cut(text: str | None, width: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dirs", nargs="*", type=Path)
    args = parser.parse_args()
    folders = args.data_dirs or sorted(path for path in EVAL.iterdir() if (path / "pdfs").is_dir())
    pymupdf = load_pymupdf()
    for folder in folders:
        counts: Counter[str] = Counter()
        print(f"\n{folder.name}")
        print(f"{'document':34} {'metadata':34} {'before':34} {'now':34} from")
        for path in sorted((folder / "pdfs").glob("*.pdf")):
            with pymupdf.open(path) as pdf:
                metadata = (pdf.metadata or {}).get("title", "").strip() or None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                document = build_index(path, pages="1-3", abstract=False, ocr="never", on_page_error="skip")
            heading = _first_top_heading(document.pages)
            before = metadata if metadata and not FILENAME_TITLE.search(metadata) else heading
            if metadata and document.title == " ".join(metadata.split()):
                source = "metadata"
            elif document.title is not None and document.title == heading:
                source = "first heading"
            elif document.title is not None:
                source = "largest text"
            else:
                source = "none"
            counts[source] += 1
            counts["metadata refused"] += bool(metadata) and source != "metadata"
            counts["changed"] += document.title != before
            print(
                f"{_cut(path.stem, 34):34} {_cut(metadata, 34):34} {_cut(before, 34):34} "
                f"{_cut(document.title, 34):34} {source}"
            )
        total = sum(counts[key] for key in ("metadata", "first heading", "largest text", "none"))
        print(
            f"{folder.name}: {total} PDFs; title from metadata {counts['metadata']}, largest text "
            f"{counts['largest text']}, first heading {counts['first heading']}, none {counts['none']}; "
            f"metadata refused {counts['metadata refused']}; changed from before {counts['changed']}"
        )


if __name__ == "__main__":
    main()
