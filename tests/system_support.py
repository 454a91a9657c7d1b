"""What tests need of the system: running code as another user (root's power to write anything dropped,
so file permissions are really enforced) and a tmpfs mounted for one test (a disk that really fills up,
or one remounted read-only)."""

from __future__ import annotations

import os
import pickle
import pwd
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

__all__ = ["as_another_user", "mounted_tmpfs"]


def as_another_user(function: Callable[[], Any]) -> Any:
    """Call ``function`` without root's power to write anything: as root, in a forked child that has
    become ``nobody``; otherwise directly. File permissions are then really enforced."""
    if os.geteuid() != 0:
        return function()
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no 'nobody' user to drop root's rights to")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            outcome: tuple[str, Any] = ("ok", function())
        except BaseException as exc:
            outcome = ("error", f"{type(exc).__name__}: {exc}")
        try:
            os.write(write_end, pickle.dumps(outcome))
        finally:
            os._exit(0)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 65536):
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    status, value = pickle.loads(b"".join(chunks))
    if status != "ok":
        raise AssertionError(f"the unprivileged call failed: {value}")
    return value


@contextmanager
def mounted_tmpfs(mount_point: Path, *options: str) -> Iterator[Path]:
    """A tmpfs mounted at ``mount_point`` (made if missing) with ``mount -o`` options, unmounted after the
    block. Needs root; the test is skipped where it cannot mount one."""
    mount_point.mkdir(exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    command = [
        "mount",
        "-t",
        "tmpfs",
        *(["-o", ",".join(options)] if options else []),
        "tmpfs",
        str(mount_point),
    ]
    done = subprocess.run(command, capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)
