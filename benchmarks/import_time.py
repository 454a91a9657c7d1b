"""Import cost of extract_thinker_pageindex, and the start of each CLI command, next to extract_thinker.

Each figure is the median over fresh interpreter processes, less the median of a bare interpreter start,
so only the import (or the command) itself is counted: wall time, and CPU time (user + system, which moves
less with the machine's load). The cases run in turn, one run of each per round, so a drift of the
machine's speed touches every case alike. The run also measures, inside each process, the time taken by
this package's imports once extract_thinker is already imported: the cost this package adds on top of the
framework.

The command cases run ``python -m extract_thinker_pageindex ...`` on the bundled samples (the whole command,
not only its imports); the last columns say whether the command imported litellm (through ExtractThinker's
package) and PyMuPDF's layout model (onnxruntime), checked in one more process that runs the same command
in-process.

Usage: python benchmarks/import_time.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "examples" / "data"
PDF = str(DATA / "service-agreement.pdf")
MARKDOWN = str(DATA / "service-agreement.md")

CASES = {
    "python (no import)": "pass",
    "extract_thinker": "import extract_thinker",
    # PyMuPDF 2.0 imports its layout model (onnxruntime) and pymupdf4llm with itself; this package does not.
    "pymupdf (import pymupdf)": "import pymupdf",
    "pymupdf (as this package imports it)": (
        "from extract_thinker_pageindex.pdf.opening import load_pymupdf\nload_pymupdf()"
    ),
    "extract_thinker_pageindex (package)": "import extract_thinker_pageindex",
    "extract_thinker_pageindex (every public name)": (
        "import extract_thinker_pageindex as p\nfor n in p.__all__: getattr(p, n)"
    ),
}


def command_cases(work: Path) -> dict[str, list[str]]:
    """The CLI invocations measured; ``work`` is a scratch directory holding an index for ``inspect``."""
    return {
        "cli --help": ["--help"],
        "cli search (PDF, 4 pages)": ["search", PDF, "-q", "termination penalty"],
        "cli search (saved index of the PDF)": [
            "search",
            str(work / "service-agreement.pageindex"),
            "-q",
            "termination penalty",
        ],
        "cli search (Markdown)": ["search", MARKDOWN, "-q", "governing law"],
        "cli inspect": ["inspect", str(work / "service-agreement.pageindex")],
        "cli index (Markdown)": ["index", MARKDOWN, "-o", str(work / "md")],
        "cli index (PDF, no model)": ["index", PDF, "-o", str(work / "pdf")],
    }


def _env() -> dict[str, str]:
    return {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def run_once(argv: list[str]) -> tuple[float, float]:
    """One fresh process: its wall seconds and its CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, env=_env(), stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(cases: dict[str, list[str]], runs: int) -> dict[str, tuple[float, float]]:
    """Median wall and CPU seconds of each case, the cases run in turn (one of each per round)."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, argv in cases.items():
            times[name].append(run_once(argv))
    return {
        name: (statistics.median(t[0] for t in samples), statistics.median(t[1] for t in samples))
        for name, samples in times.items()
    }


HEAVY = ("litellm", "onnxruntime")
IMPORTS = (
    "import contextlib, io, sys\n"
    "from extract_thinker_pageindex.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    try:\n"
    "        main({argv!r})\n"
    "    except SystemExit:\n"
    "        pass\n"
    "print(*(int(name in sys.modules) for name in {heavy!r}))\n"
)


def imports_heavy(argv: list[str]) -> dict[str, bool]:
    """Whether the command, run in-process, imported litellm and onnxruntime (PyMuPDF's layout model)."""
    result = subprocess.run(
        [sys.executable, "-c", IMPORTS.format(argv=argv, heavy=HEAVY)],
        check=True,
        env=_env(),
        capture_output=True,
        text=True,
    )
    flags = result.stdout.strip().splitlines()[-1].split()
    return {name: bool(int(flag)) for name, flag in zip(HEAVY, flags, strict=True)}


INCREMENT = (
    "import time\n"
    "import extract_thinker\n"
    "start = time.perf_counter()\n"
    "import extract_thinker_pageindex as p\n"
    "for name in p.__all__: getattr(p, name)\n"
    "print(time.perf_counter() - start)\n"
)


def increment(runs: int) -> float:
    times = [
        float(
            subprocess.run(
                [sys.executable, "-c", INCREMENT], check=True, env=_env(), capture_output=True, text=True
            ).stdout
        )
        for _ in range(runs)
    ]
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    heavy: dict[str, dict[str, bool]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        cli = [sys.executable, "-m", "extract_thinker_pageindex"]
        subprocess.run([*cli, "index", PDF, "-o", str(work)], check=True, env=_env(), capture_output=True)
        cases = {name: [sys.executable, "-c", code] for name, code in CASES.items()}
        commands = command_cases(work)
        cases.update({name: [*cli, *argv] for name, argv in commands.items()})
        measure(cases, 1)  # warm the OS file cache first
        results = measure(cases, args.runs)
        for name, argv in commands.items():
            heavy[name] = imports_heavy(argv)
    base_wall, base_cpu = results["python (no import)"]
    framework = results["extract_thinker"][0] - base_wall
    print(f"median of {args.runs} runs each, less a bare interpreter start ({base_wall:.3f} s wall)")
    header = f"{'import or command':48} {'wall s':>7} {'cpu s':>7} {'vs extract_thinker':>19}"
    print(f"{header} {'litellm':>8} {'layout':>7}")
    for name, (wall, cpu) in results.items():
        cost = wall - base_wall
        extra = "" if name.startswith("python") else f"{cost - framework:+.3f} s"
        flags = heavy.get(name, {})
        marks = [("yes" if flags[module] else "no") if module in flags else "" for module in HEAVY]
        print(f"{name:48} {cost:7.3f} {cpu - base_cpu:7.3f} {extra:>19} {marks[0]:>8} {marks[1]:>7}")
    print(
        f"\nin one process, after extract_thinker: every public name of extract_thinker_pageindex adds "
        f"{increment(args.runs):.3f} s (median of {args.runs})"
    )


if __name__ == "__main__":
    main()
