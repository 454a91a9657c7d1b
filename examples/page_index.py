"""Build the page index of the bundled contract PDF with no model, save it, load it back and look at it.

python examples/page_index.py
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-map download on offline machines

from extract_thinker_pageindex import index_document, inspect, load_index

SAMPLE = Path(__file__).resolve().parent / "data" / "service-agreement.pdf"


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        document, written = index_document(SAMPLE, output=Path(folder) / "service-agreement.pageindex")
        print(f"wrote {written.name}/ with {len(document.pages)} pages\n")
        inspect(load_index(written))

    print("\nSections and the pages they span:")
    for section in document.sections():
        pages = f"{section.first_page + 1}" + (
            f"-{section.last_page + 1}" if section.last_page != section.first_page else ""
        )
        print(f"  {section.level}  {section.title}  (p. {pages})")


if __name__ == "__main__":
    main()
