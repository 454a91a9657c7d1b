"""A PDF's title without a model: metadata titles that are identifiers, file names or not borne out by
the document give way to the largest text on the first page."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from extract_thinker_pageindex import build_index
from extract_thinker_pageindex.strategies.pdf_title import identifier_like

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0000012927-19-000010", True),  # an EDGAR accession number
        ("ADBE 10K FY15", True),
        ("LMT Q4 2022 10K", True),
        ("Ex 99.1 Q1 2023", True),
        ("PFE - 07/02/2023 - EX. 99", True),
        ("10-K 2022, 09.24.2022-2022-10-27-08-59", True),
        ("Microsoft Word - draft3.docx", True),
        ("annual-report.pdf", True),
        ("arXiv:2303.05039v2  [cs.IR]  21 Mar 2023", True),
        ("", True),
        ("Geometrie und Topologie", False),
        ("Form 8-K for Foot Locker INC filed 08/18/2022", False),
        ("2023 Annual Report", False),
        ("Retrieval-Augmented Generation for Large Language Models: A Survey", False),
    ],
)
def test_identifiers_and_file_names_are_told_from_titles(text: str, expected: bool) -> None:
    assert identifier_like(text) is expected


def cover(path: Path, metadata_title: str | None) -> Path:
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    page.insert_text((72, 80), "Northwind Traders", fontsize=11)
    page.insert_text((72, 140), "Harbour Logistics Review", fontsize=26)
    page.insert_text((72, 172), "of the Baltic Ports", fontsize=26)
    for number, line in enumerate(
        ["The ports handled more containers than ever before.", "Rail links were the bottleneck."] * 6
    ):
        page.insert_text((72, 230 + 16 * number), line, fontsize=11)
    page = document.new_page(width=612, height=792)
    page.insert_text((72, 80), "1 Introduction", fontsize=16)
    page.insert_text((72, 110), "Shipping grew in every port of the region during the year.", fontsize=11)
    if metadata_title is not None:
        document.set_metadata({"title": metadata_title})
    document.save(path)
    return path


@pytest.mark.parametrize(
    "metadata_title",
    [
        None,
        "0000012927-19-000010",
        "NWT Q4 2022 RPT",  # a job name
        "report-final-v3.pdf",
        "Contents",  # a generic heading
    ],
)
def test_a_title_that_is_not_one_gives_way_to_the_largest_text_of_the_first_page(
    tmp_path: Path, metadata_title: str | None
) -> None:
    document = build_index(cover(tmp_path / "review.pdf", metadata_title))
    assert document.title == "Harbour Logistics Review of the Baltic Ports"


def test_a_metadata_title_of_words_is_kept(tmp_path: Path) -> None:
    # Printed or not: a report's metadata may name it otherwise than its cover does.
    document = build_index(cover(tmp_path / "review.pdf", "Baltic Ports: Harbour Logistics 2023"))
    assert document.title == "Baltic Ports: Harbour Logistics 2023"


@pytest.mark.eval
@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("financebench/pdfs/BOEING_2018_10K.pdf", "THE BOEING COMPANY"),  # metadata: 0000012927-19-000010
        ("financebench/pdfs/WALMART_2020_10K.pdf", "WALMART INC."),
        (
            "structure/pdfs/APPLE_2022_10K.pdf",
            "Apple Inc.",
        ),  # metadata: 10-K 2022, 09.24.2022-2022-10-27-08-59
    ],
)
def test_filings_titled_by_an_accession_number_get_the_company_name(name: str, title: str) -> None:
    if not (EVAL / name).is_file():
        pytest.skip("../shared/eval is not here")
    assert build_index(EVAL / name, pages="1-3").title == title
