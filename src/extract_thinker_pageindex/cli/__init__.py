"""The ``extract-thinker-pageindex`` command: argument parsing and the commands (``main``), ``index
--engine`` over many files (``batch``), the summaries it prints (``summary``) and text made safe for a
terminal (``terminal``). Only ``__main__`` and the console script import ``main``; the package root takes
the public ``inspect`` and ``print_toc_tree`` from ``summary``."""
