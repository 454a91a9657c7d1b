"""A batch run: ``index_documents`` builds the page index of every file of folders into one output folder,
on this machine's processes or on a Ray cluster, resumably, with a report.

The output folder holds ``<relative name>.pageindex/`` per document, ``index-manifest.json`` (what each
index was built from, so the next run skips what is up to date) and ``index-report.json`` (the last run).
"""

from __future__ import annotations

import os
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ..errors import InvalidOptionError, OutputExistsError, PageIndexWarning
from ..inputs.files import clean_text
from ..inputs.sources import EXTENSION_KINDS
from .manifest import REPORT_FILE, Manifest, check_record_paths, write_json_atomically
from .tasks import RETRIEVER_REFUSED, BatchEntry, BatchTask, PageTexts, Status, failed_entry

__all__ = ["BatchReport", "check_run", "collect_documents", "index_documents"]

ENGINES = ("local", "ray")
SUFFIX = ".pageindex"
# Per-document options of build_index that a batch sets itself.
_PER_DOCUMENT = ("source", "content_type", "doc_name", "progress")


@dataclass
class BatchReport:
    """The outcome of :func:`index_documents`: one entry per document, in name order, and the totals."""

    out_dir: str
    engine: str
    workers: int
    seconds: float
    entries: list[BatchEntry] = field(default_factory=list)

    def count(self, status: Status) -> int:
        return sum(entry.status == status for entry in self.entries)

    @property
    def failed(self) -> list[BatchEntry]:
        return [entry for entry in self.entries if entry.status == "failed"]

    @property
    def pages(self) -> int:
        """Pages of the documents indexed in this run (skipped ones not counted)."""
        return sum(entry.pages or 0 for entry in self.entries if entry.status == "ok")

    @property
    def usage(self) -> dict[str, int]:
        total = {"calls": 0, "input_tokens": 0, "output_tokens": 0}
        for entry in self.entries:
            for key, value in (entry.usage or {}).items():
                total[key] = total.get(key, 0) + value
        return total

    def totals(self) -> dict[str, Any]:
        return {
            "documents": len(self.entries),
            "ok": self.count("ok"),
            "failed": self.count("failed"),
            "skipped": self.count("skipped"),
            "pages": self.pages,
            "seconds": round(self.seconds, 3),
            "usage": self.usage,
        }

    def to_dict(self) -> dict[str, Any]:
        """The report as ``index-report.json`` holds it."""
        return {
            "out_dir": self.out_dir,
            "engine": self.engine,
            "workers": self.workers,
            "totals": self.totals(),
            "documents": [asdict(entry) for entry in self.entries],
        }


# -- which documents, and where their indexes go ---------------------------------------------------------


def _walk(folder: str, skip: str) -> Iterator[str]:
    """The supported files under ``folder``: hidden entries, index folders and ``skip`` left out."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = [
            name
            for name in dirs
            if not name.startswith(".")
            and not name.endswith(SUFFIX)
            and os.path.abspath(os.path.join(root, name)) != skip
        ]
        for name in files:
            if not name.startswith(".") and os.path.splitext(name)[1].lower() in EXTENSION_KINDS:
                yield os.path.join(root, name)


def collect_documents(
    sources: Iterable[str | os.PathLike[str]], out_dir: str | os.PathLike[str]
) -> list[tuple[str, str, str]]:
    """The documents of ``sources`` as ``(name, source path, output path)``, sorted by name.

    A folder contributes its files with a supported extension (``sources.EXTENSION_KINDS``), recursively;
    hidden files and folders, ``*.pageindex`` folders and ``out_dir`` are left out. A file is taken as it is
    (an unsupported one then fails on its own). Names are paths relative to the common folder of the
    sources, so same-named files of different folders keep apart, and each index is its whole name with
    ``.pageindex`` added: ``a/report.pdf`` goes to ``out_dir/a/report.pdf.pageindex`` and ``a/report.md``
    to ``out_dir/a/report.md.pageindex``. Distinct files have distinct names, so no two documents share
    an index, and a document's index does not depend on which other files are indexed with it.

    Raises:
        InvalidOptionError: ``sources`` is a single path instead of a list, or empty; or two documents
            would still share an index: their names differ only in case on a file system that ignores
            case, or one index would lie inside another's folder (a file given from inside a
            ``.pageindex`` folder). Raised before any work.
    """
    if isinstance(sources, (str, os.PathLike)):
        raise InvalidOptionError(
            f"sources must be a list of paths; got the single path {os.fspath(sources)!r} (pass [path])."
        )
    given = [os.fspath(source) for source in sources]
    if not given:
        raise InvalidOptionError("sources is empty; pass files or folders to index.")
    skip = os.path.abspath(out_dir)
    files: dict[str, None] = {}  # ordered, without repeats
    roots = []
    for source in given:
        absolute = os.path.abspath(source)
        if os.path.isdir(absolute):
            roots.append(absolute)
            files.update(dict.fromkeys(_walk(absolute, skip)))
        else:
            roots.append(os.path.dirname(absolute))
            files[absolute] = None
    common = os.path.commonpath(roots)
    named = sorted((Path(os.path.relpath(path, common)).as_posix(), path) for path in files)
    _check_apart([name for name, _ in named], out_dir)
    return [(name, path, os.path.join(os.fspath(out_dir), name + SUFFIX)) for name, path in named]


def _check_apart(names: list[str], out_dir: str | os.PathLike[str]) -> None:
    """Refuse, before any work, names whose indexes would still meet: one inside another's folder, or two
    that differ only in case where ``out_dir``'s file system ignores case."""
    indexes = {name + SUFFIX for name in names}
    for name in names:
        parts = name.split("/")
        for end in range(1, len(parts)):
            if "/".join(parts[:end]) in indexes:
                raise InvalidOptionError(
                    f"The index of {clean_text(name)!r} would lie inside the index of "
                    f"{clean_text('/'.join(parts[:end])[: -len(SUFFIX)])!r}; index files from inside a "
                    f"{SUFFIX} folder on their own."
                )
    by_case: dict[str, str] = {}
    for name in names:
        other = by_case.setdefault(name.casefold(), name)
        if other != name and _ignores_case(out_dir):
            raise InvalidOptionError(
                f"{clean_text(other)!r} and {clean_text(name)!r} differ only in case, and the file system of "
                f"{clean_text(os.fspath(out_dir))!r} ignores case, so their indexes would be one folder; "
                "rename one of them or index them into different folders."
            )


def _ignores_case(out_dir: str | os.PathLike[str]) -> bool:
    """Whether the file system ``out_dir`` is on (or would be made on) treats names that differ only in
    case as one, tried with a probe file in the nearest existing folder."""
    folder = os.path.abspath(out_dir)
    while not os.path.isdir(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    name = f".pageindex-case-{uuid.uuid4().hex[:12]}"
    probe = os.path.join(folder, name)
    try:
        os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except OSError:
        return False  # cannot tell; the saves refuse what is not theirs anyway
    try:
        return os.path.exists(os.path.join(folder, name.upper()))
    finally:
        os.unlink(probe)


# -- the run ---------------------------------------------------------------------------------------------


def _check_options(options: dict[str, Any]) -> None:
    import inspect

    from ..indexing import _check_options as check_build_options
    from ..indexing import build_index

    given = sorted(set(options) & set(_PER_DOCUMENT))
    if given:
        them = "it" if len(given) == 1 else "them"
        raise InvalidOptionError(f"index_documents() sets {', '.join(given)} per document; leave {them} out.")
    accepted = set(inspect.signature(build_index).parameters) - {"source", "metadata"}
    unknown = sorted(set(options) - accepted - {"title", "author", "created_at", "updated_at"})
    if unknown:
        raise TypeError(f"index_documents() got unknown build_index option(s) {', '.join(unknown)}.")
    metadata: dict[str, Any] = {
        key: options[key] for key in ("title", "author", "created_at", "updated_at") if key in options
    }
    check_build_options(
        options.get("strategy", "auto"),
        options.get("parallel", 3),
        options.get("on_page_error", "raise"),
        options.get("dpi", 150),
        metadata,
    )


def check_run(
    out_dir: str | os.PathLike[str],
    *,
    engine: str,
    workers: int | None,
    address: str | None,
    model_rate: int | None,
    options: dict[str, Any],
) -> tuple[int | None, int | None]:
    """Raise what :func:`index_documents` raises for its options, before any work and without doing any
    (the command line checks them before it opens a retriever). Returns ``(workers, model_rate)``."""
    if engine not in ENGINES:
        raise InvalidOptionError(f"engine must be 'local' or 'ray'; got {engine!r}.")
    workers = _whole("workers", workers)
    model_rate = _whole("model_rate", model_rate)
    if model_rate is not None and options.get("model") is None:
        raise InvalidOptionError(
            "model_rate bounds model calls; pass model= as well (or leave model_rate out)."
        )
    if address is not None and engine != "ray":
        raise InvalidOptionError("address= names a Ray cluster; pass engine='ray' as well.")
    _check_options(options)
    if engine == "ray":
        from .ray_engine import import_ray

        import_ray()  # a missing extra is said before any work
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise OutputExistsError(f"out_dir {str(out)!r} is a file, not a folder; choose another out_dir.")
    check_record_paths(out)
    return workers, model_rate


def _whole(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidOptionError(f"{name} must be a whole number of at least 1 (or None); got {value!r}.")
    return value


def index_documents(
    sources: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    *,
    engine: Literal["local", "ray"] = "local",
    workers: int | None = None,
    address: str | None = None,
    model_rate: int | None = None,
    retriever: Any = None,
    progress: Callable[[int, int, BatchEntry], None] | None = None,
    **options: Any,
) -> BatchReport:
    """Build and save the page index of many documents; resumable, one failure never stops the others.

    Each document is one task. Its index is written (atomically) to ``out_dir/<relative name>.pageindex``
    (see :func:`collect_documents`). ``out_dir/index-manifest.json`` records what each index was built
    from (the content's sha256 and a key of the options that change the result); the next run with the same
    ``out_dir`` skips the documents whose content and options are unchanged and whose index still loads,
    and builds the others (changed, new, failed) again. The report is also written to
    ``out_dir/index-report.json``.

    Args:
        sources: Files and folders (folders contribute their supported files, recursively).
        out_dir: The folder the indexes, the manifest and the report go to (created if needed).
        engine: ``"local"``: worker processes of this machine; ``"ray"``: tasks on a Ray cluster (needs the
            ``[ray]`` extra).
        workers: ``"local"``: worker processes (default ``os.cpu_count()``; ``1`` indexes in this process,
            as does a run of one document). ``"ray"``: documents in flight at once (default: the cluster's
            CPUs; each task takes one CPU).
        address: ``"ray"``: the cluster to join (``"auto"``, ``"ray://host:10001"``); ``None`` joins the
            cluster of ``RAY_ADDRESS`` or starts a local one. An already initialised Ray is used as it is.
        model_rate: The most model calls in flight at once, across all workers (and, with ``"ray"``, every
            machine and every run using the same model on the cluster). ``None``: no limit beyond each
            document's ``parallel``.
        retriever: An object with ``index(document_id, pages)`` (a :class:`SQLitePageRetriever`, or a
            :class:`PostgresPageRetriever` that workers on other machines search too): each indexed or
            skipped document's pages are added as it finishes, under its name. A retriever whose
            ``shared_across_machines`` is true (PostgreSQL) is written by the workers themselves, each
            opening its own copy; any other by this process.
        progress: Called as ``progress(done, total, entry)`` after each document.
        **options: Passed to :func:`build_index` for every document (``strategy``, ``model``, ``pages``...).
            With worker processes, ``model`` must be a model name or a ``ModelClient`` built from one (its
            settings are sent; the client is made again in each worker).

    Returns:
        The :class:`BatchReport`.

    Raises:
        InvalidOptionError: an unknown engine, bad ``workers``/``model_rate``, a model that cannot be sent
            to worker processes, no sources, or ``engine="ray"`` without Ray installed.
        TypeError: an option ``build_index`` does not take.
        OutputExistsError: ``out_dir`` is a file.

    Worker processes of the local engine start from a fork server (``spawn`` where there is none), which
    imports the calling script's main module: a script that calls this with more than one worker needs the
    ``if __name__ == "__main__":`` guard.
    """
    if retriever is not None and not callable(getattr(retriever, "index", None)):
        raise InvalidOptionError(
            f"retriever must have an index(document_id, pages) method; got {type(retriever).__name__}."
        )
    workers, model_rate = check_run(
        out_dir, engine=engine, workers=workers, address=address, model_rate=model_rate, options=options
    )
    out = Path(out_dir)
    documents = collect_documents(sources, out)
    if engine == "local":
        used_workers = min(workers or os.cpu_count() or 1, max(len(documents), 1))
    else:
        used_workers = workers or 0  # the Ray engine counts the cluster's CPUs
    in_process = engine == "local" and used_workers == 1
    sent = options
    if not in_process and options.get("ocr_workers") is None:
        # Documents already run side by side, one per worker: each OCRs its scanned pages in its own process.
        sent = {**sent, "ocr_workers": 1}
    if options.get("model") is not None and (not in_process or model_rate is not None):
        from ..llm.call_limit import model_spec

        sent = {**sent, "model": model_spec(options["model"], portable=not in_process)}
    out.mkdir(parents=True, exist_ok=True)

    from ..index_key import options_key

    manifest = Manifest(out)
    environment = {key: os.environ[key] for key in ("LITELLM_LOCAL_MODEL_COST_MAP",) if key in os.environ}
    # A retriever every machine reaches (PostgreSQL) is written by the workers themselves, in parallel;
    # any other is fed by this process as documents finish.
    shared = None
    if retriever is not None and not in_process and getattr(retriever, "shared_across_machines", False):
        import pickle

        shared = pickle.dumps(retriever)
        # libpq takes the password, the user, TLS files... from PG* variables too: the workers connect with
        # this process's (where a worker's own environment sets one, its own is kept).
        environment.update({key: value for key, value in os.environ.items() if key.startswith("PG")})
    tasks = []
    for name, source, output in documents:
        kind = EXTENSION_KINDS.get(os.path.splitext(source)[1].lower())
        task = BatchTask(
            name,
            source,
            output,
            sent,
            options_key(options, kind),
            with_pages=retriever is not None and shared is None,
            environment=environment,
            shared_retriever=shared,
        )
        tasks.append(replace(task, previous=manifest.previous(output)))

    started = time.perf_counter()
    entries: list[BatchEntry] = []
    results: Iterable[tuple[BatchTask, BatchEntry, PageTexts | None]]
    if engine == "ray":
        from .ray_engine import RayEngine

        results = ray_run = RayEngine(tasks, workers=workers, address=address, model_rate=model_rate)
    else:
        from .local_engine import run_local

        results = run_local(tasks, workers=used_workers, model_rate=model_rate)
    try:
        for task, entry, pages in results:
            if retriever is not None and pages is not None:
                try:
                    retriever.index(task.name, pages)
                except Exception as exc:  # the index is saved, but the run's promise was the retriever too
                    entry = failed_entry(task, exc, RETRIEVER_REFUSED)
                    entry.sha256 = None
            manifest.record(task.output, task.options_key, entry)
            entries.append(entry)
            if progress is not None:
                progress(len(entries), len(tasks), entry)
    finally:
        manifest.save()
    if engine == "ray":
        used_workers = ray_run.workers
    entries.sort(key=lambda entry: entry.name)
    report = BatchReport(str(out), engine, used_workers, time.perf_counter() - started, entries)
    try:
        write_json_atomically(out / REPORT_FILE, report.to_dict())
    except OSError as exc:  # the work is done and its outcome is returned: the file is the lesser loss
        warnings.warn(
            f"The report {clean_text(str(out / REPORT_FILE))!r} cannot be written ({exc.strerror or exc}); "
            "the returned BatchReport holds the same.",
            PageIndexWarning,
            stacklevel=2,
        )
    return report
