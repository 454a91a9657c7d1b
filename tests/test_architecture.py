"""The package's layout: imports run downwards between folders (docs/architecture.md) and no modules import
each other in a circle, counting every import (module level, inside functions, under TYPE_CHECKING)."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import extract_thinker_pageindex

PACKAGE = "extract_thinker_pageindex"
_RELATIVE = re.compile(r"^\.+[a-z_][a-z0-9_.]*$")
ROOT = Path(extract_thinker_pageindex.__file__).parent

#: The folders (and root modules) from the bottom up; each may import only what stands on a lower layer
#: (and itself). Kept in step with the map in docs/architecture.md.
LAYERS = [
    {"errors", "_version", "_framework"},
    {"inputs", "tables"},
    {"pdf", "document", "retrieval"},
    {"llm", "ocr"},
    {"postprocess"},
    {"strategies"},
    {"indexing", "index_key"},
    {"view", "loaders", "batch"},
    {"cli"},
    {"__init__", "__main__"},
]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """Each module of the package and the modules of the package it imports."""
    modules = {_module_name(path): path for path in ROOT.rglob("*.py")}
    found: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        source = path.read_text(encoding="utf-8")
        lazy = "import_module(" in source  # names modules in strings: ``import_module(text, __name__)``
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                if target == PACKAGE or target.startswith(PACKAGE + "."):
                    for alias in node.names:
                        submodule = f"{target}.{alias.name}"
                        found[name].add(submodule if submodule in modules else target)
            elif isinstance(node, ast.Import):
                found[name].update(alias.name for alias in node.names if alias.name.startswith(PACKAGE + "."))
            elif lazy and isinstance(node, ast.Constant) and _RELATIVE.match(str(node.value)):
                target = _resolve(package, str(node.value))
                if target in modules:
                    found[name].add(target)
        found.setdefault(name, set())
    return found


def _resolve(package: str, relative: str) -> str:
    """``"..loaders.rag"`` seen from ``package`` as an absolute module name."""
    level = len(relative) - len(relative.lstrip("."))
    base = package.split(".")[: len(package.split(".")) - level + 1]
    rest = relative[level:]
    return ".".join([*base, *([rest] if rest else [])])


def _place(module: str) -> str:
    """The folder (or root module) a module belongs to: ``document`` for ``….document.model``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_folder_and_root_module_has_a_layer() -> None:
    placed = set().union(*LAYERS)
    places = {_place(module) for module in _imports()}
    assert places == placed, f"not on a layer: {sorted(places - placed)}; gone: {sorted(placed - places)}"


#: Imports allowed to run up, each for a stated reason.
FACES = {
    # ``from extract_thinker.retrieval import DocumentLoaderRAG`` becomes ``from
    # extract_thinker_pageindex.retrieval import DocumentLoaderRAG``: the package hands the loader on, lazily.
    (f"{PACKAGE}.retrieval", f"{PACKAGE}.loaders.rag"),
}


def test_imports_run_down_the_layers() -> None:
    layer = {place: height for height, places in enumerate(LAYERS) for place in places}
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in _imports().items()
        for target in targets
        if _place(target) != _place(module)
        and layer[_place(target)] >= layer[_place(module)]
        and (module, target) not in FACES
    )
    assert not upward, "imports that do not run down the layers:\n" + "\n".join(upward)


def test_no_modules_import_each_other_in_a_circle() -> None:
    graph = _imports()
    # Tarjan's strongly connected components: a component of two modules or more is a circle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in graph.get(module, ()):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert not circles, f"modules that import each other in a circle: {circles}"


def test_the_check_sees_imports_inside_functions_and_type_checking_blocks() -> None:
    graph = _imports()
    # ``view.pages`` names ``PageSpace`` only under TYPE_CHECKING; ``batch.run`` imports the engines lazily;
    # ``retrieval`` names the loader it hands on in a string for ``importlib``.
    assert f"{PACKAGE}.view.pictures" in graph[f"{PACKAGE}.view.pages"]
    assert f"{PACKAGE}.loaders.rag" in graph[f"{PACKAGE}.retrieval"]
    assert f"{PACKAGE}.batch.local_engine" in graph[f"{PACKAGE}.batch.run"]
    assert f"{PACKAGE}.batch.ray_engine" in graph[f"{PACKAGE}.batch.run"]
