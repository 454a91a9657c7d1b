"""ExtractThinker's ``Contract`` class, without importing the framework (and litellm) to get it.

``Contract`` is defined in ``extract_thinker/models/contract.py`` as a bare pydantic model, but
``from extract_thinker import Contract`` first runs ``extract_thinker/__init__.py``, which imports litellm and
every loader: about four seconds. The document model only needs the class, so this module loads that one
file by itself, under its real module name, and registers it in ``sys.modules``. A later
``import extract_thinker`` then finds ``extract_thinker.models.contract`` already imported and reuses it, so
``extract_thinker.Contract`` is the very class the page index models subclass, and ``Extractor`` accepts
them as it accepts any ``Contract``.

If the framework is already imported, or anything about loading the file alone fails (a future
ExtractThinker moves the class, the package is not installed from files), the normal import is used.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import threading
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

__all__ = ["Contract", "contract_class"]

_PACKAGE = "extract_thinker"
_MODULE = "extract_thinker.models.contract"
_lock = threading.Lock()


class _AttachToParent:
    """A meta path finder that only watches: when ``extract_thinker.models`` gets its first submodule
    imported, it sets ``extract_thinker.models.contract`` as an attribute, which the import system does not
    do for a module that was imported before its parent package. It then removes itself."""

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        parent = sys.modules.get(_MODULE.rpartition(".")[0])
        if parent is not None and name.startswith(parent.__name__ + "."):
            module = sys.modules.get(_MODULE)
            if module is not None and not hasattr(parent, "contract"):
                parent.contract = module  # type: ignore[attr-defined]
            with contextlib.suppress(ValueError):  # another thread removed it first
                sys.meta_path.remove(self)
        return None  # the normal finders import the module itself


def _load_alone() -> type:
    """Execute ``extract_thinker/models/contract.py`` alone, registered under its real module name."""
    package = importlib.util.find_spec(_PACKAGE)  # finds the package without executing it
    if package is None or not package.submodule_search_locations:
        raise ImportError(f"{_PACKAGE} is not installed as a package directory.")
    location = Path(next(iter(package.submodule_search_locations))) / "models" / "contract.py"
    spec = importlib.util.spec_from_file_location(_MODULE, location)
    if spec is None or spec.loader is None or not location.is_file():
        raise ImportError(f"{location} is not a Python source file.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[_MODULE] = module
    try:
        spec.loader.exec_module(module)
        contract = module.Contract
        if not isinstance(contract, type):
            raise ImportError(f"{_MODULE}.Contract is not a class.")
    except BaseException:
        del sys.modules[_MODULE]
        raise
    sys.meta_path.insert(0, _AttachToParent())
    return contract


def contract_class() -> type:
    """ExtractThinker's ``Contract`` class, loaded without running ``extract_thinker/__init__.py``.

    Returns:
        The class that ``from extract_thinker import Contract`` gives, before or after that import runs.

    Raises:
        ImportError: ExtractThinker is not installed.
    """
    with _lock:
        if _PACKAGE not in sys.modules and _MODULE not in sys.modules:
            try:
                return _load_alone()
            except Exception:
                pass  # the normal import below works wherever the package does
        from extract_thinker.models.contract import Contract

        return Contract


if TYPE_CHECKING:
    from extract_thinker.models.contract import Contract
else:
    Contract = contract_class()
