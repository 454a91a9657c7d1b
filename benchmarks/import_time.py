"""Import cost of extract_thinker_pageindex next to extract_thinker alone, measured in one run.

Each figure is the median wall time of fresh interpreter processes (``python -c ...``) minus the median
of a bare interpreter start, so only the import itself is counted. Those medians move with the machine's
load, so the run also measures, inside each process, the time taken by this package's imports once
extract_thinker is already imported: the cost this package adds on top of the framework.

Usage: python benchmarks/import_time.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

CASES = {
    "python (no import)": "pass",
    "extract_thinker": "import extract_thinker",
    "extract_thinker_pageindex (package)": "import extract_thinker_pageindex",
    "extract_thinker_pageindex (every public name)": (
        "import extract_thinker_pageindex as p\nfor n in p.__all__: getattr(p, n)"
    ),
}


def measure(code: str, runs: int) -> float:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


INCREMENT = (
    "import time\n"
    "import extract_thinker\n"
    "start = time.perf_counter()\n"
    "import extract_thinker_pageindex as p\n"
    "for name in p.__all__: getattr(p, name)\n"
    "print(time.perf_counter() - start)\n"
)


def increment(runs: int) -> float:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    times = [
        float(
            subprocess.run(
                [sys.executable, "-c", INCREMENT], check=True, env=env, capture_output=True, text=True
            ).stdout
        )
        for _ in range(runs)
    ]
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    measure(CASES["extract_thinker"], 1)  # warm the OS file cache first
    results = {name: measure(code, args.runs) for name, code in CASES.items()}
    base = results["python (no import)"]
    framework = results["extract_thinker"] - base
    print(f"{'import':48} {'seconds':>8} {'vs extract_thinker':>19}")
    for name, seconds in results.items():
        cost = seconds - base
        extra = "" if name.startswith("python") else f"{cost - framework:+.3f} s"
        print(f"{name:48} {cost:8.3f} {extra:>19}")
    print(
        f"\nin one process, after extract_thinker: every public name of extract_thinker_pageindex adds "
        f"{increment(args.runs):.3f} s (median of {args.runs})"
    )


if __name__ == "__main__":
    main()
