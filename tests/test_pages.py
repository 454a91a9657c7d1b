"""Page selectors: every accepted form, every refusal, and Hypothesis properties of the parser."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extract_thinker_pageindex import PageIndexError, PageSpecError, filter_pages, normalize_page_spec

# -- accepted forms ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (1, {0}),
        (10, {9}),
        ((3, 7), {2, 3, 4, 5, 6}),
        ((4, 4), {3}),
        ([(1, 3), 5, (7, 10)], {0, 1, 2, 4, 6, 7, 8, 9}),
        ([5, 1], {4, 0}),
        ([2, 2, (1, 3)], {0, 1, 2}),
        ([(9, 10)], {8, 9}),
        ("1-3,5,7-10", {0, 1, 2, 4, 6, 7, 8, 9}),
        ("4", {3}),
        (" 1 - 3 , 5 ,7-10 ", {0, 1, 2, 4, 6, 7, 8, 9}),
        ("\t2-2\n", {1}),
        ("10", {9}),
        ("3,1", {0, 2}),
    ],
)
def test_accepted_forms_select_zero_based_indices(spec, expected):
    assert normalize_page_spec(spec, 10) == expected


def test_none_selects_everything():
    assert normalize_page_spec(None, 10) is None
    assert normalize_page_spec(None, 0) is None


def test_the_string_and_list_forms_agree_on_the_spec_example():
    assert normalize_page_spec("1-3,5,7-10", 12) == normalize_page_spec([(1, 3), 5, (7, 10)], 12)


def test_last_page_is_in_bounds_and_one_past_it_is_not():
    assert normalize_page_spec(3, 3) == {2}
    with pytest.raises(PageSpecError):
        normalize_page_spec(4, 3)


# -- refusals ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message_part"),
    [
        # out of bounds
        (11, "out of range"),
        ((9, 11), "out of range"),
        ([(1, 3), 12], "out of range"),
        ("10-11", "out of range"),
        ("11", "out of range"),
        # reversed
        ((5, 3), "reversed"),
        ([(1, 2), (7, 6)], "reversed"),
        ("3-1", "reversed"),
        # zero
        (0, "start at 1"),
        ((0, 3), "start at 1"),
        ([0], "start at 1"),
        ("0", "start at 1"),
        ("0-2", "start at 1"),
        # negative
        (-1, "start at 1"),
        ((-2, 3), "start at 1"),
        ([1, -4], "start at 1"),
        # non-integer
        (2.0, "whole numbers"),
        (2.5, "whole numbers"),
        ((1.0, 3), "whole numbers"),
        (True, "whole numbers"),
        (False, "whole numbers"),
        ([True], "whole numbers"),
        ((True, 2), "whole numbers"),
        ([1, "2"], "whole numbers"),
        (["1-3"], "whole numbers"),
        (("1", "3"), "whole numbers"),
        ([[1, 2]], "whole numbers"),
        ({1, 2}, "whole numbers"),
        # ranges that are not pairs
        ((1, 2, 3), "pair"),
        ((), "pair"),
        ([(4,)], "pair"),
        # empty
        ([], "empty"),
        ("", "empty"),
        ("   ", "empty"),
        # malformed strings
        ("1-", "Cannot read"),
        ("a", "Cannot read"),
        ("1--3", "Cannot read"),
        ("-1", "Cannot read"),
        ("1,,2", "Cannot read"),
        ("1,", "Cannot read"),
        ("1-3-5", "Cannot read"),
        ("1.5", "Cannot read"),
        ("+2", "Cannot read"),
        ("1 2", "Cannot read"),
        ("one", "Cannot read"),
        # bytes are not text
        (b"1-3", "got b'1-3'"),
        (bytearray(b"2"), "bytearray"),
    ],
)
def test_refusals_raise_page_spec_error(spec, message_part):
    with pytest.raises(PageSpecError) as excinfo:
        normalize_page_spec(spec, 10)
    assert message_part in str(excinfo.value)


def test_page_spec_error_is_also_value_error_and_page_index_error():
    with pytest.raises(ValueError):
        normalize_page_spec("3-1", 10)
    with pytest.raises(PageIndexError):
        normalize_page_spec(0, 10)


def test_out_of_range_message_names_the_page_and_the_page_count():
    with pytest.raises(PageSpecError, match=r"Page 12 is out of range: the document has 10 pages"):
        normalize_page_spec("1-12", 10)
    with pytest.raises(PageSpecError, match=r"the document has 1 page\.$"):
        normalize_page_spec(2, 1)


def test_malformed_string_message_names_the_bad_part():
    with pytest.raises(PageSpecError) as excinfo:
        normalize_page_spec("1-3, x7 ,9", 10)
    assert "'x7'" in str(excinfo.value)
    assert "'1-3, x7 ,9'" in str(excinfo.value)


def test_any_page_of_an_empty_document_is_out_of_range():
    with pytest.raises(PageSpecError):
        normalize_page_spec(1, 0)


@pytest.mark.parametrize(
    "spec",
    ["1" * 5000, "2-" + "9" * 4400, "1," + "7" * 4301],
    ids=["5000-digit page", "4400-digit range end", "4301-digit second item"],
)
def test_a_number_too_long_for_int_is_a_page_spec_error(spec):
    # Python refuses int() of more than 4300 digits with a bare ValueError; the selector must still
    # answer with its own error (the CLI only catches PageIndexError).
    with pytest.raises(PageSpecError):
        normalize_page_spec(spec, 10)


# -- Hypothesis properties ---------------------------------------------------------------------------


@st.composite
def valid_selection(draw):
    """A page count and a non-empty list of in-bounds ints and (from, to) pairs."""
    total = draw(st.integers(min_value=1, max_value=60))
    page = st.integers(min_value=1, max_value=total)
    pair = st.tuples(page, page).map(lambda p: (min(p), max(p)))
    items = draw(st.lists(st.one_of(page, pair), min_size=1, max_size=12))
    return total, items


def _expected_indices(items):
    expected = set()
    for item in items:
        if isinstance(item, tuple):
            start, end = item
            expected.update(index - 1 for index in range(start, end + 1))
        else:
            expected.add(item - 1)
    return expected


@given(valid_selection())
def test_list_selection_equals_the_union_of_its_items(selection):
    total, items = selection
    result = normalize_page_spec(items, total)
    assert result == _expected_indices(items)
    assert all(0 <= index < total for index in result)


@given(valid_selection(), st.data())
def test_string_form_selects_the_same_pages_as_the_list_form(selection, data):
    total, items = selection
    space = st.sampled_from(["", " ", "  ", "\t"])
    parts = []
    for item in items:
        if isinstance(item, tuple):
            start, end = item
            parts.append(
                f"{data.draw(space)}{start}{data.draw(space)}-{data.draw(space)}{end}{data.draw(space)}"
            )
        else:
            parts.append(f"{data.draw(space)}{item}{data.draw(space)}")
    text = ",".join(parts)
    assert normalize_page_spec(text, total) == normalize_page_spec(items, total)


@given(st.integers(min_value=1, max_value=60), st.data())
def test_a_single_pair_equals_the_same_range_as_a_string(total, data):
    start = data.draw(st.integers(min_value=1, max_value=total))
    end = data.draw(st.integers(min_value=start, max_value=total))
    assert normalize_page_spec((start, end), total) == set(range(start - 1, end))
    assert normalize_page_spec(f"{start}-{end}", total) == set(range(start - 1, end))


def _check_total_function(text, total):
    try:
        result = normalize_page_spec(text, total)
    except PageSpecError:
        return
    assert isinstance(result, set)
    assert result  # a selection that parses selects something
    assert result <= set(range(total))


@given(st.text(), st.integers(min_value=0, max_value=40))
def test_arbitrary_text_parses_to_a_subset_or_raises_page_spec_error(text, total):
    _check_total_function(text, total)


@given(st.text(alphabet="0123456789-, \t", max_size=30), st.integers(min_value=0, max_value=40))
def test_selector_like_text_parses_to_a_subset_or_raises_page_spec_error(text, total):
    _check_total_function(text, total)


# -- filter_pages ------------------------------------------------------------------------------------


def test_filter_pages_keeps_zero_based_indices_and_page_order():
    pages = ["cover", "contents", "intro", "terms", "fees", "signatures"]
    assert filter_pages(pages, [6, (2, 3)]) == [(1, "contents"), (2, "intro"), (5, "signatures")]
    assert filter_pages(pages, "5") == [(4, "fees")]
    assert filter_pages(pages, (1, 2)) == [(0, "cover"), (1, "contents")]


def test_filter_pages_with_none_keeps_every_page():
    pages = ["a", "b", "c"]
    assert filter_pages(pages, None) == [(0, "a"), (1, "b"), (2, "c")]


def test_filter_pages_bounds_by_the_number_of_items():
    with pytest.raises(PageSpecError, match="the document has 3 pages"):
        filter_pages(["a", "b", "c"], 4)


@given(valid_selection())
def test_filter_pages_agrees_with_normalize_page_spec(selection):
    total, items = selection
    pages = [f"page text {number}" for number in range(1, total + 1)]
    kept = filter_pages(pages, items)
    indices = [index for index, _ in kept]
    assert indices == sorted(normalize_page_spec(items, total))
    assert all(pages[index] == item for index, item in kept)


# -- a selection's TOC ------------------------------------------------------------------------------------


def _toc_is_within(document, kept: set[int]) -> None:
    ids = {entry.id for entry in document.toc}
    assert all(entry.target_page is None or entry.target_page in kept for entry in document.toc)
    assert all(entry.parent_id is None or entry.parent_id in ids for entry in document.toc)


@pytest.mark.parametrize("source", ["service-agreement.pdf", "service-agreement.md"])
def test_a_page_selection_keeps_only_the_toc_entries_of_its_pages(source: str) -> None:
    # The PDF's outline names all four pages; "index --pages 1-2" listed entries of pages 3 and 4.
    from pathlib import Path

    from extract_thinker_pageindex import build_index

    path = Path(__file__).resolve().parents[1] / "examples" / "data" / source
    whole = build_index(path)
    part = build_index(path, pages="1-2")
    assert {2, 3} <= {entry.target_page for entry in whole.toc}  # the whole TOC goes further
    _toc_is_within(part, {0, 1})
    assert part.toc and [entry.title for entry in part.toc] == [
        entry.title for entry in whole.toc if entry.target_page in {0, 1}
    ]
    later = build_index(path, pages=[3, 4])
    _toc_is_within(later, {2, 3})
    # An entry whose parent was on a dropped page hangs under the nearest kept ancestor (here: the root).
    assert later.toc and any(entry.parent_id is None for entry in later.toc)
