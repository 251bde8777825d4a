"""The CLI's files: an export is whole or absent, an audit trail alone is refused by import
with one line; reindex errs before it draws any bar."""

from __future__ import annotations

from memman import MemoryManager
from memman.errors import StoreBusyError
from memman.semantic.embed import register_embedder
from tests.test_cli import db, memman  # noqa: F401 (fixtures)
from tests.test_semantic_retrieval import FakeEmbedder


def test_an_export_that_fails_half_way_leaves_no_file_and_a_rerun_works(
    memman,  # noqa: F811
    db,  # noqa: F811
    tmp_path,
    monkeypatch,
):
    with MemoryManager(db) as mm:
        for fact in ("User likes tea", "User owns a bike", "User lives in Oslo"):
            mm.update_memory(fact, user_id="u")
    real_export = MemoryManager.export

    def failing(self, **kwargs):
        records = real_export(self, **kwargs)
        yield next(records)
        raise StoreBusyError("the export was interrupted")

    out = tmp_path / "out.jsonl"
    monkeypatch.setattr(MemoryManager, "export", failing)
    assert memman("export", "-o", str(out), "--db", db).code == 1
    assert not out.exists()  # no truncated file that looks complete
    monkeypatch.setattr(MemoryManager, "export", real_export)
    again = memman("export", "-o", str(out), "--db", db)
    assert again.code == 0 and len(out.read_text().splitlines()) == 3


def test_reindex_without_an_embedder_errs_before_any_bar(memman, db, monkeypatch):  # noqa: F811
    with MemoryManager(db) as mm:
        mm.update_memory("User likes tea", user_id="u")
    run = memman("reindex", "--db", db)
    assert run.code == 1
    assert run.err == "Error: no embedder configured: set embedder = 'local' or 'openai'\n"
    register_embedder("fake", lambda settings: FakeEmbedder("fake-1"))
    monkeypatch.setenv("MEMMAN_EMBEDDER", "fake")
    done = memman("reindex", "--db", db)  # with one, the bar is drawn
    assert done.code == 0 and "embedding" in done.err and done.out == "embedded 1 memories\n"


def test_import_of_a_sqlite_store_says_so_in_one_line_and_creates_nothing(memman, db, tmp_path):  # noqa: F811
    # Issue 30: `memman import mem.db` printed ~200 per-line errors and created the target.
    source = tmp_path / "mem.db"
    with MemoryManager(str(source)) as mm:
        mm.update_memory("User likes tea", user_id="u")
    run = memman("import", str(source), "--db", db)
    assert run.code == 1
    assert len(run.err.strip().splitlines()) == 1
    err = run.err.replace("\n", " ")
    assert "not a memman export (JSON lines)" in err and "memman migrate-db --from" in err
    assert not (tmp_path / "cli.db").exists()


def test_import_of_an_ingest_line_points_to_ingest(memman, db, tmp_path):  # noqa: F811
    path = tmp_path / "facts.jsonl"
    path.write_text('{"fact": "User likes tea", "user_id": "u"}\n', encoding="utf-8")
    run = memman("import", str(path), "--db", db)
    err = run.err.replace("\n", " ")
    assert run.code == 2 and "newer memman" not in err
    assert "line 1: looks like ingest input" in err and "`memman ingest` takes it" in err


def test_an_export_error_names_the_file_asked_for(memman, db, tmp_path):  # noqa: F811
    with MemoryManager(db) as mm:
        mm.update_memory("User likes tea", user_id="u")
    out = tmp_path / "missing" / "x.jsonl"
    run = memman("export", "-o", str(out), "--db", db)
    assert run.code == 1
    assert ".partial" not in run.err and str(out) in run.err.replace("\n", "")
