"""DocumentLoaderPageIndex's cache: the first load of a file builds its page index, the second reads it back.

Usage: python benchmarks/pageindex_cache.py ../shared/eval/financebench [--files 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from extract_thinker_pageindex import DocumentLoaderPageIndex


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--files", type=int, default=5)
    args = parser.parse_args()
    pdfs = sorted((args.data_dir / "pdfs").glob("*.pdf"))[: args.files]
    ratios = []
    print(f"{'document':42}{'pages':>6}{'build s':>9}{'cached s':>10}{'ratio':>9}")
    with tempfile.TemporaryDirectory() as folder:
        loader = DocumentLoaderPageIndex(cache_dir=folder, strategy="text")
        loader.load(str(pdfs[0]))  # imports and first-use costs out of the way
        for path in pdfs:
            loader.cache_dir = Path(folder) / path.stem  # a cold cache for each file
            start = time.perf_counter()
            pages = loader.load(str(path))
            build = time.perf_counter() - start
            start = time.perf_counter()
            loader.load(str(path))
            cached = time.perf_counter() - start
            assert loader.last_from_cache
            ratios.append(build / cached)
            print(f"{path.stem:42}{len(pages):6}{build:9.2f}{cached:10.3f}{build / cached:8.1f}x")
    print(f"{'median':42}{'':6}{'':9}{'':10}{statistics.median(ratios):8.1f}x")


if __name__ == "__main__":
    main()
