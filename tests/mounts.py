"""Small file systems of a test's own: a tmpfs mounted under tmp_path, made read-only or
filled, for what chmod cannot show when the tests run as root (root writes whatever the mode
bits say, but not to a read-only mount, and not past a full one).

Mounting needs root (CAP_SYS_ADMIN); where it is not permitted the test skips, saying so.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _mount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *args], capture_output=True, text=True, check=False)


@contextmanager
def tmpfs(path: Path, size: str = "4m") -> Iterator[Path]:
    """A fresh tmpfs of `size` mounted at path (made if missing), unmounted afterwards."""
    path.mkdir(parents=True, exist_ok=True)
    try:
        mounted = _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path))
    except FileNotFoundError:
        pytest.skip("no mount command: cannot make a read-only or full file system here")
    if mounted.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "--lazy", str(path)], check=False)


def remount_read_only(path: Path) -> None:
    """The tmpfs at path becomes read-only, for root too (EROFS)."""
    done = _mount("-o", "remount,ro", str(path))
    assert done.returncode == 0, done.stderr
