"""Running test code as another user: root's power to write anything is dropped, so file permissions
are really enforced."""

from __future__ import annotations

import os
import pickle
import pwd
from collections.abc import Callable
from typing import Any

import pytest

__all__ = ["as_another_user"]


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
