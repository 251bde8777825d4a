import os
import sqlite3

import pytest

from memman.errors import ConfigError
from memman.semantic.vectors import make_vector_backend
from tests.clock import Clock
from tests.fake_openai import FakeOpenAI

# Re-record cassettes against a real model:
#   PYTEST_OPENAI_API_KEY=sk-... pytest --record-mode=rewrite
API_KEY = os.environ.get("PYTEST_OPENAI_API_KEY") or "badkey"


def pytest_report_header(config):
    conn = sqlite3.connect(":memory:")
    version = conn.execute("select sqlite_version()").fetchone()[0]

    def works(sql):
        try:
            conn.execute(sql)
            return "yes"
        except sqlite3.Error:
            return "no"

    fts5 = works("create virtual table t5 using fts5(x)")
    trigram = works("create virtual table t3 using fts5(x, tokenize='trigram')")
    extensions = "yes" if hasattr(conn, "enable_load_extension") else "no"
    try:
        dbapi = make_vector_backend("sqlite-vec", cache_mb=1).driver.dbapi
        vec = f"yes (through {dbapi.__name__}, sqlite {dbapi.sqlite_version})"
    except ConfigError:
        vec = "no (the vec extra is not installed)"
    return (
        f"sqlite {version}; fts5: {fts5}; trigram: {trigram}; load_extension: {extensions}; "
        f"sqlite-vec: {vec}"
    )


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory):
    """One cache folder for the run: the local model's ONNX export happens once, not per test."""
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path, monkeypatch, session_cache):
    """No test reads the developer's config, keys, home or cache directory.

    MEMMAN_LLM_ENGINE is kept: it picks the structured-output engine a whole run tests
    (.ci/run runs the LLM modules again with MEMMAN_LLM_ENGINE=builtin)."""
    for variable in list(os.environ):
        if variable.startswith(("MEMMAN_", "OPENAI_")) and variable != "MEMMAN_LLM_ENGINE":
            monkeypatch.delenv(variable)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(session_cache))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def vcr_config():
    return {"filter_headers": ["authorization", "openai-organization"]}


@pytest.fixture
def fake_openai():
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def clock() -> Clock:
    """A clock the test moves by hand (clock.advance(days=1)); starts 2026-01-01 UTC."""
    return Clock()


@pytest.fixture
def db(tmp_path) -> str:
    """A fresh SQLite file path (modules that need another kind of store define their own)."""
    return str(tmp_path / "m.db")
