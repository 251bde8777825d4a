"""Could an in-memory postings index replace the FTS5 candidate query of a write? (issue 14)

A measured prototype (benchmarks/postings.py), not memman code. For each layout (users x rows
per user, bench_scale's MSC fill; user-0 is the scope measured), it checks and times the
prototype against `Store.lexical_ranked` (storage/fts.py) on the same file:

a) agreement: for every held-out MSC fact (bench_scale's novel and search facts), the top-k
   (pk, bm25) of both: identical lists, identical pk sets, and bm25 equal to the bit; the
   tokenizer is checked first against FTS5's own docsize (tokens per row) and vocabulary;
b) CPU and wall per query, old and new alternating by round, each query in its own read
   transaction (as update_memory's), the prototype including its read of FTS5's averages
   record; the old also with the term counts kept for a whole transaction (update_many's);
c) cold start (the scope's postings built from long_term in a fresh child process: CPU, wall,
   peak RSS before and after) and the incremental cost per written row (add, content change).

    PYTHONPATH=$PWD MEMMAN_DATA=/work/shared/data python benchmarks/bench_postings.py \\
        --layouts 1x5000,20x5000,1x100000 --ops 300 --rounds 5

Stores are filled once into --cache (reused when present).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_scale import _fill, _texts
from postings import (
    LOG_DDL,
    LiveIndex,
    Postings,
    _fold,
    _varint,
    _word_tokens,
    build,
    porter,
    ranked,
    row_tokens,
    table_totals,
)
from timing import timed

from memman import MemoryManager
from memman.storage.fts import bm25_ranked
from memman.storage.store import Scope
from memman.write.retrieval import fts_terms

USER = Scope("user-0")
K = 8


def _store(cache: Path, layout: str, ops: int) -> tuple[str, list[str], list[str]]:
    """The filled file of a layout, its queries (held-out facts, never stored) and a batch
    to write: held-out facts and facts beyond the fill (restated ones: paraphrases and
    topic conflicts of stored facts)."""
    from bench_update import load_corpus

    users, per_user = (int(x) for x in layout.split("x"))
    texts = _texts(users, per_user, ops)
    path = cache / f"{layout}.db"
    if not path.exists():
        cpu, wall = timed(lambda: _fill(str(path), texts["rows"]))
        print(f"filled {layout}: {cpu / 1000:.1f} s CPU, {wall / 1000:.1f} s wall", file=sys.stderr)
    queries = texts["novel"] + texts["search"]
    stored, held_out = load_corpus()
    beyond = stored[users * per_user :][:ops]
    return str(path), queries, held_out[2 * ops : 3 * ops] + beyond


def _totals(conn) -> tuple[int, int]:
    return table_totals(conn.connection.driver_connection)


def check_tokens(conn, index: Postings) -> dict:
    """Python's tokens per row against FTS5's docsize and its vocabulary of the scope."""
    db = conn.connection.driver_connection
    sizes = dict(db.execute("SELECT id, sz FROM long_term_fts_docsize").fetchall())
    wrong_size = 0
    for pk, row in index.row_of.items():
        wrong_size += _varint(sizes[pk], 0)[0] != index.sizes.data[row]
    db.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, long_term_fts, row)"
    )
    key = index.key
    upper = key[:-1] + chr(ord(key[-1]) + 1)
    vocab = "SELECT term, doc FROM temp.vocab WHERE term >= ? AND term < ?"
    fts = dict(db.execute(vocab, (key, upper)))
    mine = {t: len(term.postings()[0]) for t, term in index.terms.items() if t.startswith(key)}
    return {
        "rows": len(index.row_of),
        "rows_whose_token_count_differs": int(wrong_size),
        "terms_fts5": len(fts),
        "terms_here": len(mine),
        "terms_differing": sum(fts.get(t) != n for t, n in mine.items())
        + len(fts.keys() - mine.keys()),
    }


# Text the MSC facts lack: diacritics, other scripts, symbols glued to words, long words, "y"s.
PROBES = (
    "Café naïve résumé Zoë Ærø Øresund façade jalapeño São Paulo Mañana crème brûlée",
    "Straße İstanbul ǅemal ﬁne Ǆ ΑΘΗΝΑ Москва 東京 ひらがな 😀dog cat😀 ½ ²³ ¼cup",
    "supercalifragilisticexpialidociouslyextraordinarilyantidisestablishmentarianism word",
    "yes yay yearly yielding syzygy psychology rhythms skyey happy toying buying ayes",
    "e-mail C++ 3.14 1,000 £900 5°C 9am 21st ABCs O'Neill’s don't can’t #tag @user a_b",
)


def _data_sentences() -> list[str]:
    """Every sentence of STS-B, SICK and MRPC (general English, a wider vocabulary)."""
    root, out = Path("/work/shared/data"), []
    for name in ("sts-train.csv", "sts-dev.csv"):
        for line in (root / "stsbenchmark" / name).read_text(encoding="utf-8").splitlines():
            out += line.split("\t", 7)[5:7]
    for line in (root / "sick" / "SICK_train.txt").read_text(encoding="utf-8").splitlines()[1:]:
        out += line.split("\t")[1:3]
    mrpc = (root / "mrpc" / "msr_paraphrase_train.txt").read_text(encoding="utf-8-sig")
    for line in mrpc.splitlines()[1:]:
        out += line.split("\t")[3:5]
    return out


def check_tokenizer(texts: list[str]) -> dict:
    """This module's tokens of each text (keyed as a scope's row) against FTS5's own, in an
    in-memory table with memman's tokenizer (migrations.fts.FTS_TOKENIZE)."""
    import sqlite3

    from memman.storage.migrations.fts import FTS_TOKENIZE, keyed_text

    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(content, tokenize='{FTS_TOKENIZE}')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    key = "q1j"
    db.executemany("INSERT INTO t (rowid, content) VALUES (?, ?)",
                   [(i + 1, keyed_text(text, key)) for i, text in enumerate(texts)])  # fmt: skip
    theirs: dict[int, list[str]] = {}
    for term, doc in db.execute("SELECT term, doc FROM v ORDER BY doc, offset"):
        theirs.setdefault(doc, []).append(term)
    differing = [
        (text, mine, theirs.get(i + 1, []))
        for i, text in enumerate(texts)
        if (mine := row_tokens(text, key)) != theirs.get(i + 1, [])
    ]
    return {
        "texts": len(texts),
        "distinct_tokens": len({t for toks in theirs.values() for t in toks}),
        "texts_differing": len(differing),
        "examples": [
            {"text": t, "here_only": sorted(set(m) - set(f)), "fts5_only": sorted(set(f) - set(m))}
            for t, m, f in differing[:5]
        ],
    }


def agreement(mm: MemoryManager, index: Postings, queries: list[str]) -> dict:
    same_list = same_set = same_scores = ties_only = asked = tied = 0
    worst = 0.0
    examples = []
    for text in queries:
        terms = fts_terms(text)
        if not terms:
            continue
        asked += 1
        with mm.store.read() as conn:
            old = mm.store.lexical_ranked(conn, USER, terms, K)
            new = ranked(index, terms, K, *_totals(conn))
        same_list += old == new
        tied += len({s for _, s in old}) < len(old)  # equal scores inside the top k
        same_set += {p for p, _ in old} == {p for p, _ in new}
        olds, news = dict(old), dict(new)
        common = olds.keys() & news.keys()
        same_scores += all(olds[p] == news[p] for p in common) and len(common) == len(old)
        for p in common:
            worst = max(worst, abs(olds[p] - news[p]))
        if old != new:
            # the same scores in the same order, the pks of equal scores in another order?
            ties_only += [s for _, s in old] == [s for _, s in new]
            if len(examples) < 3:
                examples.append({"text": text, "old": old, "new": new})
    return {
        "queries": asked,
        "identical_lists": same_list,
        "identical_sets": same_set,
        "bm25_bit_equal": same_scores,
        "differ_only_in_order_of_equal_scores": ties_only,
        "queries_with_equal_scores_in_top_k": tied,
        "max_abs_bm25_difference": worst,
        "examples": examples,
    }


def _per_query(mm, index, queries, way: str) -> tuple[list[float], list[float]]:
    cpu, wall = [], []
    if way == "fts kept":  # one transaction: the term counts kept, as in update_many
        with mm.store.read() as conn:
            for terms in queries:
                c, w = timed(lambda terms=terms: bm25_ranked(conn, USER, terms, K))
                cpu.append(c)
                wall.append(w)
        return cpu, wall
    for terms in queries:
        with mm.store.read() as conn:
            if way == "fts":
                c, w = timed(lambda terms=terms: bm25_ranked(conn, USER, terms, K))
            else:
                c, w = timed(lambda terms=terms: ranked(index, terms, K, *_totals(conn)))
        cpu.append(c)
        wall.append(w)
    return cpu, wall


def timing(mm: MemoryManager, index: Postings, queries: list[str], rounds: int) -> dict:
    terms = [t for t in (fts_terms(q) for q in queries) if t]
    ways = ("fts", "fts kept", "postings")
    for way in ways:  # warm: page cache, statement cache, stemmer cache
        _per_query(mm, index, terms[:50], way)
    out: dict[str, dict[str, list[float]]] = {
        w: {"cpu": [], "wall": [], "cpu_mean": []} for w in ways
    }
    for _ in range(rounds):
        for way in ways:
            cpu, wall = _per_query(mm, index, terms, way)
            out[way]["cpu"].append(statistics.median(cpu))
            out[way]["wall"].append(statistics.median(wall))
            out[way]["cpu_mean"].append(statistics.fmean(cpu))
    return {
        way: {k: round(statistics.median(v), 4) for k, v in got.items()} for way, got in out.items()
    }


def incremental(index: Postings, texts: list[str]) -> dict:
    """CPU per row of adding new rows (their tokens computed here: first with the stemmer's
    caches emptied, then again warm) and of changing a row's text (drop, add again)."""
    pk = int(index.pks.view().max()) + 1
    spent = {}
    for name in ("add_cold_stems", "add"):
        if name == "add_cold_stems":
            porter.cache_clear()
            _fold.cache_clear()
            _word_tokens.cache_clear()
        start = time.process_time()
        for i, text in enumerate(texts):
            index.add(pk + i, row_tokens(text, index.key), True)
        spent[name] = (time.process_time() - start) * 1000 / len(texts)
        if name == "add_cold_stems":
            for i in range(len(texts)):
                index.drop(pk + i)
            pk += len(texts)
    start = time.process_time()
    for i, text in enumerate(texts):
        index.drop(pk + i)
        index.add(pk + len(texts) + i, row_tokens(text, index.key), True)
    spent["change_text"] = (time.process_time() - start) * 1000 / len(texts)
    return {"rows": len(texts), **{f"{k}_ms": round(v, 4) for k, v in spent.items()}}


def after_writes(path: str, index: Postings, batch: list[str], queries: list[str]) -> dict:
    """update_many of batch into a copy (offline decider), the index brought up to date from
    the scope's rows as a change log would (new rows added, changed texts dropped and added,
    statuses set), then agreement again on queries."""
    import shutil
    import sqlite3

    from memman.config import load_settings

    copy = path + ".written"
    shutil.copy(path, copy)
    settings = load_settings(db=copy, decider="offline")
    with MemoryManager(copy, settings=settings) as mm:
        ops: dict[str, int] = {}
        for result in mm.update_many(batch, user_id=USER.user_id):
            ops[result.op.value] = ops.get(result.op.value, 0) + 1
    db = sqlite3.connect(copy)
    seen, changed = set(), {"added": 0, "text_changed": 0, "status_changed": 0, "dropped": 0}
    rows = db.execute(
        "SELECT pk, content, status = 'active' FROM long_term WHERE user_id = ? AND agent_id = ''",
        (USER.user_id,),
    )
    for pk, content, active in rows:
        seen.add(pk)
        toks = row_tokens(content, index.key)
        if pk not in index.row_of:
            index.add(pk, toks, bool(active))
            changed["added"] += 1
            continue
        if toks != index.row_terms[index.row_of[pk]]:
            index.drop(pk)
            index.add(pk, toks, bool(active))
            changed["text_changed"] += 1
        elif bool(index.active.data[index.row_of[pk]]) != bool(active):
            index.set_active(pk, bool(active))
            changed["status_changed"] += 1
    for pk in set(index.row_of) - seen:
        index.drop(pk)
        changed["dropped"] += 1
    with MemoryManager(copy, settings=settings) as mm:
        with mm.store.read() as conn:
            tokens = check_tokens(conn, index)
        agreed = agreement(mm, index, queries)
    Path(copy).unlink()
    return {"decisions": ops, "index_changes": changed, "tokens": tokens, "agreement": agreed}


def _rss_mb() -> float:
    """This process's resident memory now (Linux)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def cold(path: str) -> dict:
    """Run in a fresh process: the scope's postings built from the file."""
    import sqlite3

    db = sqlite3.connect(path)
    db.execute("SELECT count(*) FROM long_term").fetchone()  # open the file, as a store would
    rss, now = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, _rss_mb()
    cpu, wall = time.process_time(), time.perf_counter()
    index = build(db, USER.user_id)
    cpu, wall = (time.process_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000
    arrays = sum(a.data.nbytes for t in index.terms.values() for a in (t.rows, t.tf, t.keys))
    return {
        "rows": index.live,
        "terms": len(index.terms),
        "build_cpu_ms": round(cpu, 1),
        "build_wall_ms": round(wall, 1),
        "peak_rss_mb_before": round(rss, 1),
        "peak_rss_mb_after": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "rss_mb_before": round(now, 1),
        "rss_mb_after": round(_rss_mb(), 1),
        "posting_arrays_mb": round(arrays / 2**20, 2),
    }


def run_layout(cache: Path, layout: str, ops: int, rounds: int) -> dict:
    path, queries, batch = _store(cache, layout, ops)
    started = subprocess.run(
        [sys.executable, __file__, "--cold", path], check=True, stdout=subprocess.PIPE, text=True
    )
    result = {"layout": layout, "cold": json.loads(started.stdout.strip().splitlines()[-1])}
    import sqlite3

    index = build(sqlite3.connect(path), USER.user_id)
    with MemoryManager(path) as mm:
        with mm.store.read() as conn:
            result["tokens"] = check_tokens(conn, index)
        result["agreement"] = agreement(mm, index, queries)
        result["timing"] = timing(mm, index, queries, rounds)
    result["after_writes"] = after_writes(path, index, batch, queries)
    result["incremental"] = incremental(index, queries)
    return result


def _write_round(base: str, texts: list[str], way: str, bulk: bool) -> dict:
    """One round on a fresh copy: texts written (update_many if bulk, else one
    update_memory each, offline decider) with the FTS query (way "fts") or the prototype in
    its place (way "postings": the log's triggers added to the copy and the scope's postings
    built before the clock starts)."""
    import hashlib
    import shutil
    import sqlite3

    from bench_bulk import _snapshot

    from memman.config import load_settings
    from memman.storage import fts

    path = f"{base}.{way}"
    shutil.copy(base, path)
    original = fts.bm25_ranked
    spent = {"log": 0.0, "query": 0.0}
    if way == "postings":
        db = sqlite3.connect(path)
        for ddl in LOG_DDL:
            db.execute(ddl)
        db.commit()
        live = LiveIndex()
        live.current(db, USER.user_id, USER.agent_key)
        db.close()

        def patched(conn, scope, terms, k):
            if not terms:
                return []
            start = time.process_time()
            raw = conn.connection.driver_connection
            index = live.current(raw, scope.user_id, scope.agent_key)
            logged = time.process_time()
            found = ranked(index, terms, k, *table_totals(raw))
            spent["log"] += logged - start
            spent["query"] += time.process_time() - logged
            return found

        fts.bm25_ranked = patched
    try:
        with MemoryManager(path, settings=load_settings(db=path, decider="offline")) as mm:
            mm.search("warm the page cache", user_id=USER.user_id)
            cpu, wall = time.process_time(), time.perf_counter()
            if bulk:
                results = mm.update_many(texts, user_id=USER.user_id)
            else:
                results = [mm.update_memory(t, user_id=USER.user_id) for t in texts]
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            snapshot = _snapshot(mm)
    finally:
        fts.bm25_ranked = original
    Path(path).unlink()
    ops: dict[str, int] = {}
    for result in results:
        ops[result.op.value] = ops.get(result.op.value, 0) + 1
    return {
        "cpu_ms_per_fact": cpu * 1000 / len(texts),
        "log_ms_per_fact": spent["log"] * 1000 / len(texts),
        "query_ms_per_fact": spent["query"] * 1000 / len(texts),
        "wall_ms_per_fact": wall * 1000 / len(texts),
        "ops": ops,
        "decisions": hashlib.sha256(repr([r.op.value for r in results]).encode()).hexdigest()[:16],
        "store": hashlib.sha256(repr(snapshot).encode()).hexdigest()[:16],
    }


def writes(cache: Path, layout: str, facts: int, rounds: int, bulk: bool) -> dict:
    """The write path with and without the prototype, alternating by round: CPU per fact,
    facts/s, and whether decisions and the final store are the same."""
    users, per_user = (int(x) for x in layout.split("x"))
    path, _, _ = _store(cache, layout, 300)
    if bulk:
        from bench_bulk import _texts as bulk_texts

        texts = bulk_texts(per_user, facts)["batch"]
    else:
        texts = _texts(users, per_user, facts)["novel"]
    got: dict[str, list[dict]] = {"fts": [], "postings": []}
    for _ in range(rounds):
        for way in got:
            got[way].append(_write_round(path, texts, way, bulk))
    out = {"layout": layout, "facts": len(texts), "bulk": bulk}
    for way, samples in got.items():
        cpu = statistics.median(s["cpu_ms_per_fact"] for s in samples)
        out[way] = {
            "cpu_ms_per_fact": round(cpu, 4),
            **{
                key: round(statistics.median(s[key] for s in samples), 4)
                for key in ("wall_ms_per_fact", "log_ms_per_fact", "query_ms_per_fact")
            },
            "facts_per_s_cpu": round(1000 / cpu),
            "every_round_cpu": [round(s["cpu_ms_per_fact"], 4) for s in samples],
            "ops": samples[0]["ops"],
            "decisions": sorted({s["decisions"] for s in samples}),
            "store": sorted({s["store"] for s in samples}),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layouts", default="1x5000,20x5000,1x100000")
    parser.add_argument("--ops", type=int, default=300, help="queries: 2 x ops held-out facts")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cache", default="/tmp/bench_postings")
    parser.add_argument("--writes", action="store_true", help="time the write path instead")
    parser.add_argument("--bulk", action="store_true", help="--writes with update_many")
    parser.add_argument("--facts", type=int, default=300, help="--writes: facts written")
    parser.add_argument("--tokenizer", action="store_true", help="check the tokenizer only")
    parser.add_argument("--cold", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cold:
        print(json.dumps(cold(args.cold)))
        return
    if args.tokenizer:
        print(json.dumps(check_tokenizer(list(PROBES) + _data_sentences()), indent=1))
        return
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    for layout in args.layouts.split(","):
        if args.writes:
            print(json.dumps(writes(cache, layout, args.facts, args.rounds, args.bulk), indent=1))
            continue
        print(json.dumps(run_layout(cache, layout, args.ops, args.rounds), indent=1))


if __name__ == "__main__":
    main()
