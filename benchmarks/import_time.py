"""Import cost of extract_thinker_pageindex, and the start of each CLI command, next to extract_thinker.

Each figure is the median wall time of fresh interpreter processes minus the median of a bare interpreter
start, so only the import (or the command) itself is counted. Those medians move with the machine's load,
so the run also measures, inside each process, the time taken by this package's imports once
extract_thinker is already imported: the cost this package adds on top of the framework.

The command cases run ``python -m extract_thinker_pageindex ...`` on the bundled samples (the whole command,
not only its imports); a last column says whether the command imported litellm (through ExtractThinker's
package), checked in one more process that runs the same command in-process.

Usage: python benchmarks/import_time.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
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
        "cli search (Markdown)": ["search", MARKDOWN, "-q", "governing law"],
        "cli inspect": ["inspect", str(work / "service-agreement.pageindex")],
        "cli index (Markdown)": ["index", MARKDOWN, "-o", str(work / "md")],
        "cli index (PDF, no model)": ["index", PDF, "-o", str(work / "pdf")],
    }


def _env() -> dict[str, str]:
    return {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def measure(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, env=_env(), stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


IMPORTS_LITELLM = (
    "import contextlib, io, sys\n"
    "from extract_thinker_pageindex.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    try:\n"
    "        main({argv!r})\n"
    "    except SystemExit:\n"
    "        pass\n"
    "print(int('litellm' in sys.modules))\n"
)


def imports_litellm(argv: list[str]) -> bool:
    result = subprocess.run(
        [sys.executable, "-c", IMPORTS_LITELLM.format(argv=argv)],
        check=True,
        env=_env(),
        capture_output=True,
        text=True,
    )
    return bool(int(result.stdout.strip().splitlines()[-1]))


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
    measure([sys.executable, "-c", CASES["extract_thinker"]], 1)  # warm the OS file cache first
    results = {name: measure([sys.executable, "-c", code], args.runs) for name, code in CASES.items()}
    litellm: dict[str, bool] = {}
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        cli = [sys.executable, "-m", "extract_thinker_pageindex"]
        subprocess.run([*cli, "index", PDF, "-o", str(work)], check=True, env=_env(), capture_output=True)
        for name, argv in command_cases(work).items():
            results[name] = measure([*cli, *argv], args.runs)
            litellm[name] = imports_litellm(argv)
    base = results["python (no import)"]
    framework = results["extract_thinker"] - base
    print(f"{'import or command':48} {'seconds':>8} {'vs extract_thinker':>19} {'litellm':>8}")
    for name, seconds in results.items():
        cost = seconds - base
        extra = "" if name.startswith("python") else f"{cost - framework:+.3f} s"
        imported = ("yes" if litellm[name] else "no") if name in litellm else ""
        print(f"{name:48} {cost:8.3f} {extra:>19} {imported:>8}")
    print(
        f"\nin one process, after extract_thinker: every public name of extract_thinker_pageindex adds "
        f"{increment(args.runs):.3f} s (median of {args.runs})"
    )


if __name__ == "__main__":
    main()
