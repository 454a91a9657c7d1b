"""The document model: node union, id and reference validation, bbox rules, sections and traversal."""

from __future__ import annotations

import pytest
from extract_thinker import Contract
from pydantic import ValidationError

from extract_thinker_pageindex import (
    FORMAT_VERSION,
    Document,
    HeadingNode,
    ImageNode,
    Page,
    ParagraphNode,
    SectionNode,
    TableNode,
    TocEntry,
    TocEntryNode,
)


def two_page_document() -> dict:
    """A section opened on page 0 that continues on page 1, with a subsection there."""
    return {
        "name": "doc",
        "pages": [
            {
                "index": 0,
                "nodes": [
                    {"type": "section", "id": "s1", "description": "Terms of payment."},
                    {"type": "heading", "id": "h1", "parent_id": "s1", "level": "h1", "content": "Payment"},
                    {"type": "paragraph", "id": "a", "parent_id": "s1", "content": "Pay within 30 days."},
                ],
            },
            {
                "index": 1,
                "nodes": [
                    {"type": "header", "id": "hd", "content": "ACME — Confidential"},
                    {
                        "type": "list_item",
                        "id": "b",
                        "parent_id": "s1",
                        "level": "l2",
                        "content": "late fees",
                    },
                    {"type": "section", "id": "s2", "parent_id": "s1"},
                    {"type": "heading", "id": "h2", "parent_id": "s2", "level": "h2", "content": "Late fees"},
                    {
                        "type": "table",
                        "id": "t",
                        "parent_id": "s2",
                        "content": "|a|\n|-|\n|1|",
                        "bbox": [10, 20, 300, 400],
                    },
                    {"type": "footer", "id": "ft", "content": "Page 2"},
                ],
            },
            {"index": 3, "nodes": [{"type": "paragraph", "id": "c", "content": "Unsectioned."}]},
        ],
        "toc": [
            {"id": "t1", "title": "Payment", "target_page": 0, "target_section_id": "s1"},
            {
                "id": "t2",
                "parent_id": "t1",
                "title": "Late fees",
                "target_page": 1,
                "target_section_id": "s2",
                "level": "l2",
            },
        ],
    }


def test_models_are_framework_contracts() -> None:
    for model in (
        Document,
        Page,
        SectionNode,
        HeadingNode,
        ParagraphNode,
        ImageNode,
        TableNode,
        TocEntry,
        TocEntryNode,
    ):
        assert issubclass(model, Contract)


def test_discriminated_union_builds_the_right_node_classes() -> None:
    document = Document.model_validate(two_page_document())
    kinds = [type(node).__name__ for _, node in document.iter_nodes()]
    assert kinds == [
        "SectionNode",
        "HeadingNode",
        "ParagraphNode",
        "HeaderNode",
        "ListItemNode",
        "SectionNode",
        "HeadingNode",
        "TableNode",
        "FooterNode",
        "ParagraphNode",
    ]
    assert document.format_version == FORMAT_VERSION


def test_unknown_node_type_is_rejected() -> None:
    data = two_page_document()
    data["pages"][0]["nodes"].append({"type": "sidebar", "id": "x", "content": "?"})
    with pytest.raises(ValidationError, match="sidebar"):
        Document.model_validate(data)


def test_sections_span_pages_until_their_last_content() -> None:
    document = Document.model_validate(two_page_document())
    sections = {section.id: section for section in document.sections()}
    assert (sections["s1"].first_page, sections["s1"].last_page) == (0, 1)
    assert (sections["s2"].first_page, sections["s2"].last_page) == (1, 1)
    assert sections["s1"].title == "Payment" and sections["s1"].level == "h1"
    assert sections["s1"].description == "Terms of payment."
    assert document.heading_path("t") == ["Payment", "Late fees"]
    assert document.heading_path("c") == []
    assert document.section_title("s2") == "Late fees"
    assert document.node_counts()["section"] == 2


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["pages"][1]["nodes"][1].update(parent_id="ghost"), "not a node"),
        (lambda d: d["pages"][1]["nodes"][1].update(parent_id="a"), "not a section"),
        (lambda d: d["pages"][1]["nodes"][1].update(id="a"), "more than once"),
        (lambda d: d["pages"][0]["nodes"][0].update(id="../evil"), "letters, digits"),
        (lambda d: d["pages"][0]["nodes"][0].update(parent_id="s2"), "cycle"),
        (lambda d: d["toc"][1].update(parent_id="nope"), "not an entry"),
        (lambda d: d["toc"][1].update(target_section_id="h2"), "not a section"),
        (lambda d: d["toc"][0].update(parent_id="t2"), "cycle"),
        (lambda d: d["toc"][1].update(id="t1"), "more than once"),
        (lambda d: d["toc"][1].update(target_page=9), "outside the document"),
        (lambda d: d["pages"].reverse(), "source order"),
        (lambda d: d["pages"][2].update(index=1), "unique"),
        (lambda d: d.update(format_version="2.0"), "not supported"),
        (lambda d: d["pages"][1]["nodes"][4].update(bbox=[300, 20, 10, 400]), "inverted"),
        (lambda d: d["pages"][1]["nodes"][4].update(bbox=[0, 0, 0, 0]), "empty"),
        (lambda d: d["pages"][1]["nodes"][4].update(bbox=[1, 2, 3]), "four numbers"),
        (lambda d: d["pages"][1]["nodes"][4].update(bbox=[-5, 2, 3, 4]), "negative"),
        (lambda d: d["pages"][1]["nodes"][4].update(bbox=[1, 2, "x", 4]), "numbers"),
        (lambda d: d["pages"][0]["nodes"][1].update(level="h7"), "level"),
        (lambda d: d["pages"][0]["nodes"][2].update(level="poem"), "level"),
    ],
)
def test_invalid_structures_are_rejected(mutate, message: str) -> None:
    data = two_page_document()
    mutate(data)
    with pytest.raises(ValidationError, match=message):
        Document.model_validate(data)


def test_bbox_coordinates_round_to_whole_points() -> None:
    node = ImageNode(id="i", bbox=[10.4, 20.6, 30, 40], kind="chart")
    assert node.bbox == (10, 21, 30, 40)


def test_toc_target_page_may_name_an_unselected_page_of_the_source() -> None:
    data = two_page_document()
    data["source_page_count"] = 12
    data["toc"][1]["target_page"] = 9
    document = Document.model_validate(data)
    assert document.toc[1].target_page == 9


def test_printed_page_accepts_numbers_and_labels() -> None:
    assert TocEntry(id="e", title="Intro", printed_page=7).printed_page == "7"
    assert TocEntry(id="e", title="Preface", printed_page="iv").printed_page == "iv"
    with pytest.raises(ValidationError):
        TocEntry(id="e", title="x", printed_page=True)


def test_image_bytes_never_go_into_json() -> None:
    node = ImageNode(id="i", image_data=b"\x89PNG...", kind="photo")
    assert "image_data" not in node.model_dump_json()
