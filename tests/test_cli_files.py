"""The CLI's files: an export is whole or absent; stats shows how big the store has grown."""

from __future__ import annotations

from memman import MemoryManager
from memman.errors import StoreBusyError
from tests.test_cli import db, memman  # noqa: F401 (fixtures)


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
