"""The ``extract-thinker-pageindex`` command: argument parsing and the commands (``commands``, whose
:func:`main` is the console script and ``python -m extract_thinker_pageindex``), ``index --engine`` over many
files (``batch``), the summaries it prints (``summary``) and text made safe for a terminal (``terminal``).
Only ``__main__``, the console script and the package root (the public ``inspect`` and ``print_toc_tree``
of ``summary``) import it; it imports every folder below it."""

from .commands import main

__all__ = ["main"]
