"""Every fenced Python snippet of README.md and docs/*.md runs as shown: the docs cannot drift from the code.

Each ```python block is one test, named by its file and line (``docs/retrieval.md:56``), and is checked by
what it is:

- **A script** (most blocks) runs in a fresh interpreter from a folder holding the bundled samples
  (``examples/data/``, with ``service-agreement.pageindex`` built from the Markdown sample, as
  getting-started's ``index`` step leaves it) and the small real files the snippets name (``contract.pdf``,
  ``msa.pdf``, ``scan.pdf``, ``scanned-contract.pdf``, ``report.md``, ``filings/``). Model calls reach the
  local OpenAI-compatible server (``tests/llm_server.py``) through ``OPENAI_API_BASE``, which answers each
  request with a plausible instance of the JSON schema the request carries. It must exit 0. A ```text
  block right after it is what it prints, compared line by line with doctest's rules (``...`` stands for
  anything, such as a model's answer).
- **A doctest** (a block of ``>>>`` lines) runs under ``python -m doctest``.
- **A signature** (``build_index(source, *, ...) -> Document``) must list the parameters of the exported
  function of that name, in order, with the same kinds and defaults.
- **A skipped block** is marked in the Markdown by ``<!-- snippet: skip (reason) -->`` on the line before
  it: one that needs a PostgreSQL server, a Ray cluster or a named host. It is still compiled, and every
  name it uses must be imported or defined in it (ruff's F821).
"""

from __future__ import annotations

import ast
import doctest
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from llm_server import LLMServer, Reply, completion_body
from scan_support import Line, PageSpec, make_scan

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SCRIPT = "docs_snippet.py"
#: ruff, reporting only the names a snippet uses without importing or defining them (F821).
RUFF_UNDEFINED_NAMES = ["-m", "ruff", "check", "--isolated", "--select", "F821"]

_OPENER = re.compile(r"^(?P<indent>[ \t]*)```python(?P<info>.*)$")
_SKIP = re.compile(r"^\s*<!--\s*snippet:\s*skip\s*\((?P<reason>[^)]+)\)\s*-->\s*$")
_SIGNATURE = re.compile(
    r"^(?P<name>\w+)\((?P<params>.*?)\)\s*->\s*(?P<returns>[^\n]+)$", re.MULTILINE | re.DOTALL
)


@dataclass(frozen=True)
class Snippet:
    """One ```python block: where it is, its code (dedented), its skip reason, the output shown after it."""

    path: Path
    line: int
    code: str
    skip: str | None
    expected: str | None

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def kind(self) -> str:
        if self.code.lstrip().startswith(">>>"):
            return "doctest"
        if _signatures(self.code):
            return "signature"
        return "script"


def _block(lines: list[str], start: int, indent: str) -> tuple[str, int]:
    """The block opened on line ``start`` (0-based), dedented, and the index of its closing fence."""
    end = start + 1
    while end < len(lines) and lines[end].rstrip() != indent + "```":
        end += 1
    if end == len(lines):
        raise ValueError(f"the code block opened on line {start + 1} is never closed")
    body = [
        line[len(indent) :] if line.startswith(indent) else line.lstrip() for line in lines[start + 1 : end]
    ]
    return "\n".join(body) + "\n", end


def collect(path: Path) -> list[Snippet]:
    """The ```python blocks of one Markdown file, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    snippets = []
    for number, text in enumerate(lines):
        opener = _OPENER.match(text)
        if opener is None:
            continue
        if opener["info"].strip():
            raise ValueError(
                f"{path.name}:{number + 1}: ```python{opener['info']} — mark a block that cannot run with "
                "<!-- snippet: skip (reason) --> on the line before it instead"
            )
        code, end = _block(lines, number, opener["indent"])
        before = next((line for line in reversed(lines[:number]) if line.strip()), "")
        skip = _SKIP.match(before)
        if skip is None and "snippet:" in before:
            raise ValueError(f"{path.name}:{number + 1}: write the marker as <!-- snippet: skip (reason) -->")
        after = end + 1
        while after < len(lines) and not lines[after].strip():
            after += 1
        expected = None
        if after < len(lines) and lines[after].rstrip() == opener["indent"] + "```text":
            expected, _ = _block(lines, after, opener["indent"])
        snippets.append(Snippet(path, number + 1, code, skip["reason"].strip() if skip else None, expected))
    return snippets


SNIPPETS = [snippet for path in DOCUMENTS for snippet in collect(path)]


def _signatures(code: str) -> list[re.Match[str]]:
    """The ``name(params) -> type`` entries of a block made only of them, else ``[]``."""
    try:
        ast.parse(code)
        return []  # valid Python: a script, not a signature
    except SyntaxError:
        pass
    found = list(_SIGNATURE.finditer(code.strip()))
    rest = _SIGNATURE.sub("", code.strip())
    return found if found and not rest.strip() else []


# -- the folder the snippets run in ---------------------------------------------------------------------


def _text_pdf(path: Path, pages: list[str]) -> None:
    import pymupdf

    document = pymupdf.open()
    for text in pages:
        page = document.new_page()
        page.insert_textbox(pymupdf.Rect(56, 56, 540, 780), text, fontsize=11)
    document.save(path)
    document.close()


_CONTRACT_SCAN = PageSpec(
    [
        Line("Services Agreement", 90, size=20),
        Line("4. Term and Termination", 130, size=14),
        Line("Customer may terminate for convenience on ninety days written notice.", 160),
        Line("On such termination Customer shall pay an early termination penalty", 180),
        Line("equal to fifty percent of the fees remaining for the initial term.", 200),
    ]
)

_REPORT = """\
# Summary

The year in one page.

# Revenue

Revenue grew by four percent.

# Costs

Costs fell in every region.

# Outlook

We expect growth to continue.
"""


@pytest.fixture(scope="module")
def workspace_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What every snippet starts from (copied afresh for each): the samples and the files the docs name."""
    from extract_thinker_pageindex import index_document

    folder = tmp_path_factory.mktemp("docs-workspace")
    data = folder / "examples" / "data"
    shutil.copytree(
        ROOT / "examples" / "data",
        data,
        ignore=shutil.ignore_patterns("*.pageindex", "*.view.html", "*.view_files", "__pycache__"),
    )
    # getting-started's first step: `extract-thinker-pageindex index examples/data/service-agreement.md`.
    index_document(data / "service-agreement.md")
    shutil.copy(data / "service-agreement.pdf", folder / "contract.pdf")
    _text_pdf(
        folder / "msa.pdf",
        [
            "Master Services Agreement\n\n1. Services\nProvider hosts the platform for Customer.",
            "9. Governing Law\nThis Agreement is governed by the laws of England and Wales. The courts of "
            "London have exclusive jurisdiction.",
        ],
    )
    make_scan(folder / "scan.pdf", [_CONTRACT_SCAN])
    make_scan(folder / "scanned-contract.pdf", [_CONTRACT_SCAN])
    (folder / "report.md").write_text(_REPORT, encoding="utf-8")
    (folder / "filings").mkdir()
    shutil.copy(folder / "contract.pdf", folder / "filings" / "contract.pdf")
    shutil.copy(folder / "msa.pdf", folder / "filings" / "msa.pdf")
    return folder


# -- the model server's answers -------------------------------------------------------------------------


def _schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks its answer to follow: in ``response_format`` (structured output), or
    written into a message (ExtractThinker's extraction prompt: "... match the following json_schema")."""
    response_format = body.get("response_format") or {}
    if isinstance(response_format.get("json_schema"), dict):
        return response_format["json_schema"].get("schema")
    decoder = json.JSONDecoder()
    for message in body.get("messages", []):
        content = message.get("content")
        texts = [content] if isinstance(content, str) else [part.get("text", "") for part in content or []]
        for text in texts:
            at = text.find("json_schema")
            start = text.find("{", at) if at >= 0 else -1
            if start >= 0:
                schema, _ = decoder.raw_decode(text[start:])
                return schema
    return None


def _instance(schema: dict[str, Any], definitions: dict[str, Any], name: str = "value") -> Any:
    """A small value that validates against ``schema``: required fields only, strings that name the field."""
    if "$ref" in schema:
        return _instance(definitions[schema["$ref"].rsplit("/", 1)[-1]], definitions, name)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [option for option in schema[key] if option.get("type") != "null"] or schema[key]
            return _instance(options[0], definitions, name)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((item for item in kind if item != "null"), "null")
    if kind == "object":
        properties = schema.get("properties", {})
        return {
            key: _instance(properties[key], definitions, key)
            for key in schema.get("required", list(properties))
            if key in properties
        }
    if kind == "array":
        return [_instance(schema.get("items", {}), definitions, name)] * schema.get("minItems", 0)
    return {"string": name.replace("_", " "), "integer": 1, "number": 1.0, "boolean": False}.get(kind)


def plausible_answer(body: dict[str, Any]) -> Reply:
    """Answer any request with an instance of the schema it carries; a request without one is an error, so a
    snippet that reaches the model some other way fails loudly instead of passing on a made-up answer."""
    schema = _schema_of(body)
    if schema is None:
        return Reply(400, b'{"error": {"message": "no JSON schema in the request"}}')
    return Reply(200, completion_body(json.dumps(_instance(schema, schema.get("$defs", {})))))


# -- the tests -------------------------------------------------------------------------------------------


def test_the_docs_have_snippets_and_few_are_skipped() -> None:
    assert len(SNIPPETS) >= 25, [snippet.name for snippet in SNIPPETS]
    assert {snippet.path.name for snippet in SNIPPETS} >= {"README.md", "getting-started.md", "retrieval.md"}
    skipped = [snippet.name for snippet in SNIPPETS if snippet.skip]
    # Each skip is a block no test machine can run (a PostgreSQL server, a Ray cluster, a named host).
    assert len(skipped) <= 6, skipped


def test_a_block_is_read_with_its_skip_mark_and_output(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n<!-- snippet: skip (needs a cluster) -->\n```python\nconnect()\n```\n\n"
        "!!! note\n    ```python\n    print(1)\n    ```\n\n    ```text\n    1\n    ```\n",
        encoding="utf-8",
    )
    first, second = collect(page)
    assert (first.line, first.code, first.skip, first.expected) == (4, "connect()\n", "needs a cluster", None)
    assert (second.line, second.code, second.skip, second.expected) == (9, "print(1)\n", None, "1\n")


@pytest.mark.parametrize("snippet", [s for s in SNIPPETS if s.kind == "signature"], ids=lambda s: s.name)
def test_a_documented_signature_matches_the_function(snippet: Snippet) -> None:
    import extract_thinker_pageindex

    for found in _signatures(snippet.code):
        documented = ast.parse(f"def {found['name']}({found['params']}): ...").body[0].args
        kinds = inspect.Parameter
        shown = [
            *((arg.arg, kinds.POSITIONAL_ONLY) for arg in documented.posonlyargs),
            *((arg.arg, kinds.POSITIONAL_OR_KEYWORD) for arg in documented.args),
            *([(documented.vararg.arg, kinds.VAR_POSITIONAL)] if documented.vararg else []),
            *((arg.arg, kinds.KEYWORD_ONLY) for arg in documented.kwonlyargs),
            *([(documented.kwarg.arg, kinds.VAR_KEYWORD)] if documented.kwarg else []),
        ]
        defaults = dict(
            zip(
                [arg.arg for arg in documented.args][len(documented.args) - len(documented.defaults) :],
                map(ast.literal_eval, documented.defaults),
                strict=True,
            )
        )
        defaults.update(
            (arg.arg, ast.literal_eval(default))
            for arg, default in zip(documented.kwonlyargs, documented.kw_defaults, strict=True)
            if default is not None
        )
        real = inspect.signature(getattr(extract_thinker_pageindex, found["name"]))
        assert shown == [(name, parameter.kind) for name, parameter in real.parameters.items()], found["name"]
        assert defaults == {
            name: parameter.default
            for name, parameter in real.parameters.items()
            if parameter.default is not inspect.Parameter.empty
        }, found["name"]
        # `-> dict` documents `-> dict[str, Any]`: the type shown, without its parameters.
        assert re.sub(r"\[.*\]", "", found["returns"].strip()) == re.sub(
            r"\[.*\]", "", str(real.return_annotation)
        ), found["name"]


@pytest.mark.parametrize("snippet", [s for s in SNIPPETS if s.skip], ids=lambda s: s.name)
def test_a_skipped_snippet_compiles_and_shows_its_imports(snippet: Snippet) -> None:
    compile(snippet.code, snippet.name, "exec")
    result = subprocess.run(
        [sys.executable, *RUFF_UNDEFINED_NAMES, "--stdin-filename", "snippet.py", "-"],
        input=snippet.code,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, f"{snippet.name} uses names it does not import:\n{result.stdout}"
    pytest.skip(f"{snippet.name}: {snippet.skip}")


def _matches(expected: str, printed: str) -> bool:
    """Whether ``printed`` is ``expected``, line by line, ``...`` standing for anything (as in doctests)."""

    def lines(text: str) -> str:
        return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()) + "\n"

    return doctest.OutputChecker().check_output(lines(expected), lines(printed), doctest.ELLIPSIS)


@pytest.mark.slow
@pytest.mark.parametrize(
    "snippet", [s for s in SNIPPETS if not s.skip and s.kind != "signature"], ids=lambda s: s.name
)
def test_a_snippet_runs_as_shown(
    snippet: Snippet, workspace_template: Path, tmp_path: Path, llm_server: LLMServer
) -> None:
    llm_server.default = plausible_answer
    work = tmp_path / "work"
    shutil.copytree(workspace_template, work)
    env = {key: value for key, value in os.environ.items() if key != "EXTRACT_THINKER_MODEL"}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env["EXTRACT_THINKER_PAGEINDEX_CACHE"] = str(tmp_path / "cache")  # not the user's ~/.cache
    if snippet.kind == "doctest":
        (work / "docs_snippet.txt").write_text(snippet.code, encoding="utf-8")
        command = [sys.executable, "-m", "doctest", "docs_snippet.txt"]
    else:
        (work / SCRIPT).write_text(snippet.code, encoding="utf-8")
        command = [sys.executable, SCRIPT]
    result = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{snippet.name} failed:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    if snippet.expected is not None:
        assert _matches(snippet.expected, result.stdout), (
            f"{snippet.name} printed\n{result.stdout}\nbut the docs show\n{snippet.expected}"
        )
