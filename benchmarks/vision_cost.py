"""What each kind of model request carries, before and after the request layout of 5e3486e.

Runs ``build_index(pdf, strategy="vision", refine=True, abstract=True)`` on a generated 3-page US Letter
PDF with text and no metadata title (dpi 150), so that it makes every kind of request: one per page, the
review of each page (``refine_sample=3``, all scored well: no re-reads), the title and the three rounds of
the abstract. The model is ``openai/gpt-4o`` on the local OpenAI-compatible test server
(``tests/llm_server.py``), which records every request body; nothing leaves the machine.

Three sides, each in its own process: **before** (the tree of 947fd33, instructor's MD_JSON mode, from
``--before-src``), **after, prompt** (``ModelClient(..., structured_output=False)``: the compact schema at
the end of the system message) and **after, structured** (``structured_output=True``: the schema in
``response_format``). Per request kind it prints the image (data-URL characters, pixels, tokens by OpenAI's
published high-detail rule: an estimate), the fixed prefix (system message; the ``response_format`` schema
counted apart), the non-image user text, whether the prefix is byte-identical across the run's requests of
that kind, and ``max_tokens``. Then the estimated cost of a long document, with and without prompt caching,
and the issue's target for a page request (non-image input <= 1,500 tokens and <= 6,000 characters).

Usage:
    LITELLM_LOCAL_MODEL_COST_MAP=True .venv/bin/python benchmarks/vision_cost.py \
        [--before-src /tmp/before/src] [--pages 300] [--input-price 2.50] [--output-price 10] \
        [--answer-tokens 1000]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODEL = "openai/gpt-4o"
KINDS = ("page", "review", "title", "abstract")
SIDES = (("before", None), ("after, prompt", False), ("after, structured", True))
SAMPLE = (
    "The committee reviewed the budget for the coming year. Revenue rose by twelve percent, while costs "
    "fell in every region but one. The board approved the plan and asked for a report on the risks. "
)
PAGE_ANSWER = {
    "nodes": [
        {"type": "section", "id": "s", "description": "What the committee decided about the budget."},
        {"type": "heading", "id": "h", "parent_id": "s", "level": "h1", "content": "Budget review"},
        {"type": "paragraph", "id": "p", "parent_id": "s", "content": SAMPLE.strip()},
    ]
}


# -- the child: one side's build, its requests reduced to what is measured ---------------------------------


def kind_of(body: dict[str, Any]) -> str:
    system = json.dumps(body["messages"][0]["content"])
    for marker, kind in (("Give the title", "title"), ("You write the abstract", "abstract")):
        if marker in system:
            return kind
    return "review" if "You check the extraction" in system else "page"


def answer(body: dict[str, Any]) -> Any:
    from llm_server import Reply, completion_body

    replies = {
        "page": PAGE_ANSWER,
        "review": {"score": 0.9, "problems": []},
        "title": {"title": "Budget Review"},
        "abstract": {"missing_entities": [], "abstract": "The committee approved the budget."},
    }
    return Reply(200, completion_body(json.dumps(replies[kind_of(body)])))


def texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [part.get("text", "") for part in content if part.get("type") == "text"]


def reduce(body: dict[str, Any]) -> dict[str, Any]:
    """A request as measured: prefix (system text), schema, user text, image size, max_tokens."""
    system, *rest = body["messages"]
    urls = [
        part["image_url"]["url"]
        for message in rest
        if isinstance(message["content"], list)
        for part in message["content"]
        if part.get("type") == "image_url"
    ]
    pixels = None
    if urls:  # a PNG's width and height are bytes 16-24 of its header
        header = base64.b64decode(urls[0].split(",", 1)[1][:32])
        pixels = (int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big"))
    schema = body.get("response_format")
    return {
        "kind": kind_of(body),
        "prefix": "\n".join(texts(system["content"])),
        "schema": json.dumps(schema, separators=(",", ":")) if schema else "",
        "user": "\n".join(text for message in rest for text in texts(message["content"])),
        "first_user": "\n".join(texts(rest[0]["content"])),
        "image_chars": len(urls[0]) if urls else 0,
        "pixels": pixels,
        "max_tokens": body.get("max_tokens"),
    }


def collect(structured: bool | None) -> dict[str, Any]:
    """One side's requests, reduced, and the caps on the title's and the abstract's material."""
    import tempfile

    import pymupdf

    from extract_thinker_pageindex import build_index
    from extract_thinker_pageindex.llm.client import ModelClient
    from extract_thinker_pageindex.postprocess.abstract import MAX_ABSTRACT_INPUT
    from extract_thinker_pageindex.postprocess.title import MAX_TITLE_INPUT
    from llm_server import LLMServer

    with tempfile.TemporaryDirectory() as folder, LLMServer() as server:
        pdf = pymupdf.open()
        for number in range(1, 4):
            page = pdf.new_page(width=612, height=792)  # US Letter, no metadata title
            text = f"Part {number}\n\n" + SAMPLE * 12
            page.insert_textbox(pymupdf.Rect(72, 72, 540, 720), text, fontsize=11)
        path = Path(folder) / "letter.pdf"
        pdf.save(path)
        server.default = answer
        os.environ.update(OPENAI_API_BASE=server.url, OPENAI_API_KEY="x")
        options: dict[str, Any] = {"sleep": lambda seconds: None}
        if structured is not None:
            options["structured_output"] = structured
        client = ModelClient(MODEL, **options)
        build_index(path, strategy="vision", model=client, dpi=150, parallel=1, refine=True, refine_sample=3)
        requests = [reduce(body) for body in server.requests]
    return {"requests": requests, "caps": {"title": MAX_TITLE_INPUT, "abstract": MAX_ABSTRACT_INPUT}}


# -- the parent: tokens, tables, cost ----------------------------------------------------------------------


def tokenizer() -> tuple[Any, str]:
    try:
        import litellm
        from litellm.utils import _select_tokenizer

        litellm.token_counter(model="gpt-4o", text="probe")
        chosen = _select_tokenizer("gpt-4o")
        name = getattr(chosen["tokenizer"], "name", chosen["type"])
        return (lambda text: litellm.token_counter(model="gpt-4o", text=text) if text else 0), (
            f"litellm.token_counter(model='gpt-4o') = {name}"
        )
    except Exception as exc:  # any failure: say so, and count characters / 4
        return (lambda text: math.ceil(len(text) / 4)), f"characters / 4 (litellm's counter failed: {exc})"


def image_tokens(pixels: tuple[int, int] | None) -> int:
    """OpenAI's published high-detail rule (an estimate of what gpt-4o bills for an image): fit in
    2048 x 2048, shorter side to 768, then 170 tokens a 512-px tile + 85."""
    if pixels is None:
        return 0
    width, height = pixels
    scale = min(1.0, 2048 / max(width, height))
    width, height = width * scale, height * scale
    scale = min(1.0, 768 / min(width, height))
    width, height = width * scale, height * scale
    return 170 * math.ceil(width / 512) * math.ceil(height / 512) + 85


def summarise(side: dict[str, Any], count: Any) -> dict[str, dict[str, Any]]:
    requests = side["requests"]
    out: dict[str, dict[str, Any]] = {}
    for kind in KINDS:
        mine = [item for item in requests if item["kind"] == kind]
        if not mine:
            continue
        first = mine[0]
        prefixes = {hashlib.sha256((item["prefix"] + item["schema"]).encode()).hexdigest() for item in mine}
        user_tokens = [count(item["user"]) for item in mine]
        row = {
            "requests": len(mine),
            "image_chars": round(statistics.mean(item["image_chars"] for item in mine)),
            "pixels": "x".join(map(str, first["pixels"])) if first["pixels"] else "-",
            "image_tokens": image_tokens(first["pixels"]),
            "prefix_chars": len(first["prefix"]),
            "prefix_tokens": count(first["prefix"]),
            "schema_chars": len(first["schema"]),
            "schema_tokens": count(first["schema"]),
            "user_chars": round(statistics.mean(len(item["user"]) for item in mine)),
            "user_tokens": round(statistics.mean(user_tokens)),
            "identical": f"{'yes' if len(prefixes) == 1 else 'NO'} {min(prefixes)[:8]}",
            "max_tokens": str(first["max_tokens"]) if first["max_tokens"] else "not set",
        }
        row["text_chars"] = row["prefix_chars"] + row["schema_chars"] + row["user_chars"]
        row["text_tokens"] = row["prefix_tokens"] + row["schema_tokens"] + row["user_tokens"]
        # The same request with its material grown to the cap a long document fills (title, abstract).
        grow = int(
            max(0, side["caps"].get(kind, 0) - statistics.mean(len(item["first_user"]) for item in mine))
        )
        row["long_tokens"] = row["text_tokens"] + count((SAMPLE * (1 + grow // len(SAMPLE)))[:grow])
        out[kind] = row
    return out


ROWS = (
    ("requests in the run", "requests"),
    ("image: data-URL chars (mean)", "image_chars"),
    ("image: pixels", "pixels"),
    ("image: tokens (OpenAI rule, estimate)", "image_tokens"),
    ("prefix: system message chars", "prefix_chars"),
    ("prefix: system message tokens", "prefix_tokens"),
    ("prefix: response_format chars", "schema_chars"),
    ("prefix: response_format tokens", "schema_tokens"),
    ("per request: user text chars (mean)", "user_chars"),
    ("per request: user text tokens (mean)", "user_tokens"),
    ("non-image input chars", "text_chars"),
    ("non-image input tokens", "text_tokens"),
    ("prefix identical across requests, sha256", "identical"),
    ("max_tokens (output asked for)", "max_tokens"),
)


def cell(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def ratio(after: Any, before: Any) -> str:
    if not isinstance(after, int) or not isinstance(before, int) or isinstance(after, bool):
        return ""
    return f"x{after / before:.2f}" if before else ("=" if after == 0 else "new")


def print_kind(kind: str, rows: dict[str, dict[str, dict[str, Any]]]) -> None:
    names = [name for name, _ in SIDES]
    before = rows["before"].get(kind, {})
    print(f"\n== {kind} request{'s' if before.get('requests', 1) > 1 else ''} ==")
    print(f"{'':40}{names[0]:>14}{names[1]:>20}{'ratio':>7}{names[2]:>20}{'ratio':>7}")
    for label, key in ROWS:
        values = [rows[name].get(kind, {}).get(key, "-") for name in names]
        line = f"{label:40}{cell(values[0]):>14}"
        for value in values[1:]:
            line += f"{cell(value):>20}{ratio(value, values[0]):>7}"
        print(line)


def print_cost(rows: dict[str, dict[str, dict[str, Any]]], args: argparse.Namespace) -> None:
    price_in, price_out, pages = args.input_price / 1e6, args.output_price / 1e6, args.pages
    print(
        f"\n== Estimated cost of a {pages}-page document at ${args.input_price:.2f} / M input tokens and "
        f"${args.output_price:.2f} / M output tokens (default: gpt-4o) =="
    )
    print(f"{'':58}" + "".join(f"{name:>20}" for name, _ in SIDES))
    lines: dict[str, list[str]] = {}
    verdicts: list[str] = []
    for name, _ in SIDES:
        page = rows[name]["page"]
        per_page = page["text_tokens"] + page["image_tokens"]
        prefix = page["prefix_tokens"] + page["schema_tokens"]
        qualifies = prefix >= 1024 and page["identical"].startswith("yes")
        cached = (prefix // 128) * 128 if qualifies else 0  # OpenAI caches in 128-token steps from 1,024
        extra = rows[name]["title"]["long_tokens"] + 3 * rows[name]["abstract"]["long_tokens"]
        values = {
            "page request: input tokens (non-image + image estimate)": f"{per_page:,}",
            "pages only: input tokens": f"{pages * per_page:,}",
            "pages only: input cost, no caching": f"${pages * per_page * price_in:,.2f}",
            "pages only: input cost, prompt caching where it applies": "$"
            + f"{(pages * per_page - (pages - 1) * cached * 0.5) * price_in:,.2f}",
            "+ title + 3 abstract rounds (material at its caps): tokens": f"{pages * per_page + extra:,}",
            "+ title + abstract: input cost, no caching": f"${(pages * per_page + extra) * price_in:,.2f}",
            "page prefix tokens; cacheable (identical, >= 1,024)?": f"{prefix:,}; "
            + ("yes" if qualifies else "no"),
        }
        for label, value in values.items():
            lines.setdefault(label, []).append(value)
        identical = "identical on every page" if page["identical"].startswith("yes") else "NOT identical"
        verdicts.append(
            f"  {name}: {prefix:,} tokens, {identical} -> {'qualifies' if qualifies else 'does not'}"
        )
    for label, values in lines.items():
        print(f"{label:58}" + "".join(f"{value:>20}" for value in values))
    output = pages * args.answer_tokens * price_out
    print(
        f"output: {args.answer_tokens:,} tokens assumed per page answer, the same on every side: "
        f"${output:,.2f} for {pages} pages (--answer-tokens)"
    )
    print(
        "prompt caching: OpenAI bills cached input at 50% off, only for a prefix of >= 1,024 tokens that is\n"
        "byte-identical from the start of the request (in 128-token steps). The old prefix held the page's\n"
        "pixel size in its second line: identical here (all pages are Letter), broken by other page sizes.\n"
        "Does the page requests' prefix (system message + response_format) qualify?"
    )
    print("\n".join(verdicts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-src", default="/tmp/before/src", help="src/ of the tree before (947fd33)")
    parser.add_argument("--pages", type=int, default=300, help="pages of the document priced")
    parser.add_argument("--input-price", type=float, default=2.50, help="$ per million input tokens")
    parser.add_argument("--output-price", type=float, default=10.0, help="$ per million output tokens")
    parser.add_argument("--answer-tokens", type=int, default=1000, help="output tokens assumed a page")
    parser.add_argument("--collect", choices=("none", "true", "false"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if args.collect:  # the child: one side, whose package comes from PYTHONPATH
        sys.path.insert(0, str(ROOT / "tests"))
        print(json.dumps(collect({"none": None, "true": True, "false": False}[args.collect])))
        return

    count, counted_by = tokenizer()
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    for name, structured in SIDES:
        src = args.before_src if name == "before" else str(ROOT / "src")
        child = subprocess.run(
            [sys.executable, __file__, "--collect", str(structured).lower()],
            env={**os.environ, "PYTHONPATH": src},
            capture_output=True,
            text=True,
            check=False,
        )
        if child.returncode != 0:
            sys.exit(f"the {name} side failed:\n{child.stderr}")
        rows[name] = summarise(json.loads(child.stdout), count)

    print(f"Model {MODEL} on a local OpenAI-compatible server; 3-page US Letter PDF at dpi 150.")
    print(f"before: {args.before_src} (instructor MD_JSON); after: {ROOT / 'src'} (structured_output forced)")
    print(f"Tokens: {counted_by}.\nImage tokens: an estimate by OpenAI's published high-detail rule.")
    print("Prefix = system message (+ response_format schema); tokens of text only, without chat framing.")
    for kind in KINDS:
        print_kind(kind, rows)
    print_cost(rows, args)

    before = rows["before"]["page"]
    print(
        "\nTarget: page request non-image input <= 1,500 tokens, <= 6,000 chars after (~5,000 tokens before)"
    )
    print(f"  before: {before['text_tokens']:,} tokens, {before['text_chars']:,} chars")
    for name, _ in SIDES[1:]:
        page = rows[name]["page"]
        holds = page["text_tokens"] <= 1500 and page["text_chars"] <= 6000
        verdict = "holds" if holds else "MISSED"
        print(f"  {name}: {page['text_tokens']:,} tokens, {page['text_chars']:,} chars -> {verdict}")


if __name__ == "__main__":
    main()
