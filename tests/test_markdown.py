"""The Markdown builder: CommonMark structure into pages, sections, nodes and a TOC tree."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from extract_thinker_pageindex import (
    Document,
    DocumentLoadError,
    EmptyDocumentError,
    HeadingNode,
    ListItemNode,
    MetadataNode,
    PageSpecError,
    ParagraphNode,
    SectionNode,
    TableNode,
    UnsupportedFormatError,
    build_index,
)


def md(text: str, **options: object) -> Document:
    return build_index(textwrap.dedent(text).lstrip("\n"), content_type="markdown", **options)


def headings(document: Document) -> list[tuple[int, str, str]]:
    return [
        (page.index, node.level, node.content)
        for page, node in document.iter_nodes()
        if isinstance(node, HeadingNode)
    ]


def types_on(document: Document, page_index: int) -> list[str]:
    page = next(page for page in document.pages if page.index == page_index)
    return [node.type for node in page.nodes]


# A real-world README: code fences full of '#' lines, tilde fences, indented code, a table, nested lists.
REAL_README = """
# fastproj

A tool that does things. [![ci](https://example.org/badge.svg)](https://example.org)

## Installation

```bash
# install from PyPI
pip install fastproj
# or from source
git clone https://example.org/fastproj.git
```

~~~python
# Not a heading either
## nor this
def main():
    pass
~~~

    # indented code is code
    make install

## Usage

1. Create a config:
   - `fastproj init`
   - edit `fastproj.toml`
2. Run it.

| Option | Default | Meaning |
|--------|---------|---------|
| `--fast` | off | Go fast |
| `--out` | `-` | Where to write |

### Advanced usage

Environment variables
---------------------

Set `FASTPROJ_HOME`.

# Changelog

See CHANGELOG.md.
"""


def test_real_readme_code_blocks_never_become_headings() -> None:
    document = md(REAL_README)
    assert headings(document) == [
        (0, "h1", "fastproj"),
        (0, "h2", "Installation"),
        (0, "h2", "Usage"),
        (0, "h3", "Advanced usage"),
        (0, "h2", "Environment variables"),
        (1, "h1", "Changelog"),
    ]
    code = [
        node.content
        for _, node in document.iter_nodes()
        if isinstance(node, ParagraphNode) and node.level == "code"
    ]
    assert code[0].startswith("# install from PyPI")
    assert code[1].startswith("# Not a heading either\n## nor this")
    assert code[2] == "# indented code is code\nmake install"


def test_top_level_headings_start_pages_and_keep_levels() -> None:
    document = md(REAL_README)
    assert [page.index for page in document.pages] == [0, 1]
    assert document.title == "fastproj"
    assert document.source_page_count == 2


def test_sections_nest_by_level_and_content_points_at_its_section() -> None:
    document = md(REAL_README)
    by_title = {section.title: section for section in document.sections()}
    assert by_title["Installation"].parent_id == by_title["fastproj"].id
    assert by_title["Advanced usage"].parent_id == by_title["Usage"].id
    # A setext h2 after an h3 closes the h3 and sits under the h1 again.
    assert by_title["Environment variables"].parent_id == by_title["fastproj"].id
    assert by_title["Changelog"].parent_id is None
    nodes = document.node_map()
    table = next(node for node in nodes.values() if isinstance(node, TableNode))
    assert table.parent_id == by_title["Usage"].id
    assert table.content.splitlines()[0] == "| Option | Default | Meaning |"
    assert len(table.content.splitlines()) == 4


def test_list_items_keep_nesting_level_and_order() -> None:
    document = md(REAL_README)
    items = [
        (node.level, node.content) for _, node in document.iter_nodes() if isinstance(node, ListItemNode)
    ]
    assert items == [
        ("l1", "Create a config:"),
        ("l2", "`fastproj init`"),
        ("l2", "edit `fastproj.toml`"),
        ("l1", "Run it."),
    ]


def test_generated_toc_is_a_tree_linked_to_sections_and_pages() -> None:
    document = md(REAL_README)
    entries = {entry.title: entry for entry in document.toc}
    assert [entry.title for entry in document.toc] == [
        "fastproj",
        "Installation",
        "Usage",
        "Advanced usage",
        "Environment variables",
        "Changelog",
    ]
    assert entries["fastproj"].parent_id is None and entries["fastproj"].level == "l1"
    assert entries["Installation"].parent_id == entries["fastproj"].id
    assert entries["Advanced usage"].parent_id == entries["Usage"].id
    assert entries["Advanced usage"].level == "l3"
    assert entries["Changelog"].target_page == 1
    sections = {section.id: section.title for section in document.sections()}
    for entry in document.toc:
        assert sections[entry.target_section_id] == entry.title


def test_atx_and_setext_headings_with_all_six_levels() -> None:
    document = md(
        """
        Title
        =====

        Sub
        ---

        ### three
        #### four ####
        ##### five
        ###### six
        ####### seven is not a heading
        """
    )
    assert [(level, text) for _, level, text in headings(document)] == [
        ("h1", "Title"),
        ("h2", "Sub"),
        ("h3", "three"),
        ("h4", "four"),
        ("h5", "five"),
        ("h6", "six"),
    ]
    paragraphs = [node.content for _, node in document.iter_nodes() if isinstance(node, ParagraphNode)]
    assert paragraphs == ["####### seven is not a heading"]
    assert [entry.level for entry in document.toc] == ["l1", "l2", "l3", "l4", "l5", "l6"]


def test_smallest_present_level_starts_pages_when_there_is_no_h1() -> None:
    document = md(
        """
        ## Alpha
        a
        ### Alpha one
        b
        ## Beta
        c
        """
    )
    assert headings(document) == [(0, "h2", "Alpha"), (0, "h3", "Alpha one"), (1, "h2", "Beta")]
    assert document.toc[0].level == "l1"


def test_preamble_before_first_heading_is_its_own_page() -> None:
    document = md(
        """
        Some intro text that comes first.

        - and a list

        # First
        body
        """
    )
    assert [page.index for page in document.pages] == [0, 1]
    assert types_on(document, 0) == ["paragraph", "list_item"]
    preamble = document.pages[0].nodes[0]
    assert isinstance(preamble, ParagraphNode) and preamble.parent_id is None
    assert types_on(document, 1) == ["section", "heading", "paragraph"]


def test_file_without_headings_is_one_page_with_every_block() -> None:
    document = md(
        """
        Just a note.

        Second paragraph
        spanning lines.

        > quoted words
        """
    )
    assert len(document.pages) == 1
    assert document.toc == []
    paragraphs = [(node.level, node.content) for _, node in document.iter_nodes()]
    assert paragraphs == [
        ("paragraph", "Just a note."),
        ("paragraph", "Second paragraph\nspanning lines."),
        ("citation", "quoted words"),
    ]


def test_front_matter_becomes_metadata_and_document_fields() -> None:
    document = md(
        """
        ---
        title: Master Services Agreement
        author: [Ada Lovelace, Charles Babbage]
        date: 2024-03-01
        ---

        # Parties
        Text.
        """
    )
    first = document.pages[0]
    assert isinstance(first.nodes[0], MetadataNode)
    assert "title: Master Services Agreement" in first.nodes[0].content
    # Front matter alone does not make a preamble page.
    assert len(document.pages) == 1
    assert document.title == "Master Services Agreement"
    assert document.author == "Ada Lovelace, Charles Babbage"
    assert document.created_at is not None and document.created_at.year == 2024


def test_thematic_break_at_start_is_not_front_matter() -> None:
    document = md(
        """
        ---
        # Heading after a rule
        text
        """
    )
    assert headings(document) == [(0, "h1", "Heading after a rule")]
    assert not any(isinstance(node, MetadataNode) for _, node in document.iter_nodes())


def test_headings_in_quotes_and_lists_are_content_not_structure() -> None:
    document = md(
        """
        # Real
        > # Quoted heading
        - # Listed heading
        """
    )
    assert headings(document) == [(0, "h1", "Real")]
    contents = [
        node.content for _, node in document.iter_nodes() if not isinstance(node, (SectionNode, HeadingNode))
    ]
    assert contents == ["Quoted heading", "Listed heading"]


def test_heading_text_is_plain_but_paragraphs_keep_markdown() -> None:
    document = md(
        """
        # The *quick* `brown` [fox](https://example.org)
        A **bold** claim with [a link](https://example.org).
        """
    )
    assert headings(document) == [(0, "h1", "The quick brown fox")]
    paragraph = next(node for _, node in document.iter_nodes() if isinstance(node, ParagraphNode))
    assert paragraph.content == "A **bold** claim with [a link](https://example.org)."


def test_page_selection_keeps_original_indices_and_repoints_parents() -> None:
    text = """
    # One
    a
    # Two
    b
    ## Two point one
    c
    # Three
    d
    """
    document = md(text, pages=[2, 3])
    assert [page.index for page in document.pages] == [1, 2]
    assert [entry.title for entry in document.toc] == ["Two", "Two point one", "Three"]
    assert document.source_page_count == 3
    with pytest.raises(PageSpecError, match="out of range"):
        md(text, pages=4)


def test_page_selection_of_a_page_inside_a_dropped_section() -> None:
    # A page never holds a section opened on another page in Markdown, but selection must still leave no
    # dangling references; the model validation would reject the document otherwise.
    document = md("# A\nx\n# B\ny\n", pages="2")
    assert [page.index for page in document.pages] == [1]
    assert all(
        node.parent_id is None or node.parent_id.startswith("p1-") for _, node in document.iter_nodes()
    )


def test_markdown_file_by_path_and_metadata_keywords(tmp_path: Path) -> None:
    path = tmp_path / "Guide.markdown"
    path.write_text("# Guide\n\nHello.\n", encoding="utf-8")
    document = build_index(path, author="Someone", title="Override")
    assert document.name == "Guide"
    assert document.extension == "markdown"
    assert document.title == "Override"
    assert document.author == "Someone"


def test_crlf_and_bom_are_normalised(tmp_path: Path) -> None:
    path = tmp_path / "win.md"
    path.write_bytes("\ufeff# Title\r\n\r\nBody line\r\n".encode())
    document = build_index(path)
    assert headings(document) == [(0, "h1", "Title")]
    assert document.pages[0].nodes[-1].content == "Body line"


@pytest.mark.parametrize("text", ["", "   \n\n\t\n"])
def test_empty_markdown_is_a_clear_error(text: str) -> None:
    with pytest.raises(EmptyDocumentError, match="empty"):
        build_index(text, content_type="markdown")


def test_binary_and_non_utf8_markdown_are_refused(tmp_path: Path) -> None:
    binary = tmp_path / "binary.md"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    with pytest.raises(DocumentLoadError, match="binary"):
        build_index(binary)
    latin = tmp_path / "latin.md"
    latin.write_bytes("# Caf\xe9\n".encode("latin-1"))
    with pytest.raises(DocumentLoadError, match="UTF-8"):
        build_index(latin)


def test_missing_file_and_unknown_extension(tmp_path: Path) -> None:
    with pytest.raises(DocumentLoadError, match="No such file"):
        build_index(tmp_path / "nope.md")
    odd = tmp_path / "notes.xyz"
    odd.write_text("# Notes\n", encoding="utf-8")
    with pytest.raises(UnsupportedFormatError, match="content_type"):
        build_index(odd)
    # Naming the content type makes any extension work.
    assert headings(build_index(odd, content_type="markdown")) == [(0, "h1", "Notes")]


def test_unknown_options_are_errors() -> None:
    with pytest.raises(TypeError, match="colour"):
        md("# A\n", colour="red")
    with pytest.raises(UnsupportedFormatError, match="strategy"):
        md("# A\n", strategy="magic")
    with pytest.raises(UnsupportedFormatError, match="vision"):
        md("# A\n", strategy="vision")
    with pytest.raises(ValueError, match="parallel"):
        md("# A\n", parallel=0)


def test_html_comments_are_dropped_and_html_blocks_kept() -> None:
    document = md(
        """
        # Page
        <!-- editor note -->
        <div align="center">Centered</div>
        """
    )
    contents = [node.content for _, node in document.iter_nodes() if isinstance(node, ParagraphNode)]
    assert contents == ['<div align="center">Centered</div>']


def test_loose_list_item_collects_its_paragraphs_and_code() -> None:
    document = md(
        """
        # Steps
        - First step.

          More about the first step.

          ```
          run --this
          ```
        - Second step.
        """
    )
    items = [node.content for _, node in document.iter_nodes() if isinstance(node, ListItemNode)]
    assert items == ["First step.\n\nMore about the first step.\n\nrun --this", "Second step."]


def test_every_built_document_validates_round_trip() -> None:
    document = md(REAL_README)
    again = Document.model_validate_json(document.model_dump_json())
    assert again == document
