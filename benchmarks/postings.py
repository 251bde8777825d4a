"""A prototype in-memory postings index for one scope, ranking as FTS5's bm25 does (issue 14).

Not memman code: bench_postings.py measures whether an index like this could replace the FTS5
candidate query of a write (storage/fts.py) with the same candidates, and at what cost.

What FTS5 does, and this copies:
- tokens: the row's keyed text (migrations.fts.keyed_text: every word prefixed by the scope's
  key), split as unicode61 splits it (letters, digits, private use; ASCII folded to lower case,
  other letters lower-cased with their diacritics removed), each token porter-stemmed as
  fts5_tokenize.c stems it (tokens of 3..64 bytes; the key is part of the token, so it counts
  in those limits and in the stemmer's "a vowel after the first letter" test);
- bm25 (fts5_aux.c): k1 = 1.2, b = 0.75; idf = log((N - nHit + 0.5) / (nHit + 0.5)), floored
  at 1e-6, with N the rows of the WHOLE table (every scope: FTS5 has no per-query N) and nHit
  the rows holding the phrase (keyed tokens: only this scope's rows can); D the row's token
  count; avgdl the whole table's tokens / N; the score summed phrase by phrase in the order the
  MATCH names them, and returned negated (lower is better);
- the MATCH storage/fts.py writes: an OR of the phrases, or in a scope of more than
  COMMON_TERM_ROWS rows the re-rank `((R) NOT (C)) OR ((C) AND (R))`, whose matching branch
  alone counts (a row without C scores its R phrases; a row with C scores C's then R's).

N and the whole table's tokens are read from FTS5's own averages record (one small blob) at
each query: other scopes' writes change them and nothing here sees those writes.
"""

from __future__ import annotations

import math
import re
import sqlite3
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from memman.storage.fts import COMMON_TERM_ROWS, FTS_TOKEN, RAREST_ROWS
from memman.storage.migrations.fts import keyed_text, scope_key

K1, B = 1.2, 0.75
_POS_BITS = 16  # an instance key is row index << 16 | token position (rows < 65,536 tokens)

# ---------------------------------------------------------------------------------------------
# The tokenizer: unicode61 remove_diacritics 2, then FTS5's porter.

_TOKEN_RUN = re.compile(r"[^\W_]+")  # letters and digits (unicode61's L* N*; Co ignored here)


# Case folds of unicode61 that str.lower() does not make.
_FOLDS = {"\u03c2": "\u03c3", "\u00b5": "\u03bc"}  # final sigma, micro sign


def _fold_char(c: str) -> str:
    """One character as unicode61 (remove_diacritics 2) folds it: lower case; a Latin
    letter loses its diacritics (only Latin letters do: Greek accents and kana marks stay)."""
    c = _FOLDS.get(c, c.lower())
    base = unicodedata.normalize("NFD", c)
    if len(base) > 1 and (base[0].isascii() or "LATIN" in unicodedata.name(base[0], "")):
        return "".join(x for x in base if not unicodedata.combining(x))
    return c


@lru_cache(maxsize=1 << 16)
def _fold(word: str) -> str:
    """unicode61's fold of a run of token characters."""
    if word.isascii():
        return word.lower()
    return "".join(_fold_char(c) for c in word)


def _vowel(c: str, y_is_vowel: bool) -> bool:
    return c in "aeiou" or (y_is_vowel and c == "y")


def _gobble_vc(s: str, start: int, end: int, prev_cons: bool) -> int:
    """fts5PorterGobbleVC over s[start:end]: the offset (from start) just past the first
    vowel-then-consonant run, 0 if there is none."""
    cons = prev_cons
    i = start
    while i < end:
        cons = not _vowel(s[i], cons)
        if not cons:
            break
        i += 1
    i += 1
    while i < end:
        cons = not _vowel(s[i], cons)
        if cons:
            return i - start + 1
        i += 1
    return 0


def _m_gt0(s: str, n: int) -> bool:
    return _gobble_vc(s, 0, n, False) != 0


def _m_gt1(s: str, n: int) -> bool:
    first = _gobble_vc(s, 0, n, False)
    return bool(first) and _gobble_vc(s, first, n, True) != 0


def _m_eq1(s: str, n: int) -> bool:
    first = _gobble_vc(s, 0, n, False)
    return bool(first) and _gobble_vc(s, first, n, True) == 0


def _o_star(s: str, n: int) -> bool:
    if s[n - 1] in "wxy":
        return False
    mask, cons = 0, False
    for i in range(n):
        cons = not _vowel(s[i], cons)
        mask = (mask << 1) + cons
    return (mask & 7) == 5


def _has_vowel(s: str, n: int) -> bool:
    return any(_vowel(s[i], i > 0) for i in range(n))


def _m_gt1_s_or_t(s: str, n: int) -> bool:
    return s[n - 1] in "st" and _m_gt1(s, n)


# Steps 2, 3 and 4: (suffix, condition on the stem, replacement), tried in this order among
# the suffixes sharing the word's next-to-last letter; the first suffix that fits (and is
# shorter than the word) decides, whether or not its condition holds.
_STEP2 = (
    ("ational", _m_gt0, "ate"), ("tional", _m_gt0, "tion"), ("enci", _m_gt0, "ence"),
    ("anci", _m_gt0, "ance"), ("izer", _m_gt0, "ize"), ("logi", _m_gt0, "log"),
    ("bli", _m_gt0, "ble"), ("alli", _m_gt0, "al"), ("entli", _m_gt0, "ent"),
    ("eli", _m_gt0, "e"), ("ousli", _m_gt0, "ous"), ("ization", _m_gt0, "ize"),
    ("ation", _m_gt0, "ate"), ("ator", _m_gt0, "ate"), ("alism", _m_gt0, "al"),
    ("iveness", _m_gt0, "ive"), ("fulness", _m_gt0, "ful"), ("ousness", _m_gt0, "ous"),
    ("aliti", _m_gt0, "al"), ("iviti", _m_gt0, "ive"), ("biliti", _m_gt0, "ble"),
)  # fmt: skip
_STEP3 = (
    ("ical", _m_gt0, "ic"), ("ness", _m_gt0, ""), ("icate", _m_gt0, "ic"),
    ("iciti", _m_gt0, "ic"), ("ful", _m_gt0, ""), ("ative", _m_gt0, ""), ("alize", _m_gt0, "al"),
)  # fmt: skip
_STEP4 = (
    ("al", _m_gt1, ""), ("ance", _m_gt1, ""), ("ence", _m_gt1, ""), ("er", _m_gt1, ""),
    ("ic", _m_gt1, ""), ("able", _m_gt1, ""), ("ible", _m_gt1, ""), ("ant", _m_gt1, ""),
    ("ement", _m_gt1, ""), ("ment", _m_gt1, ""), ("ent", _m_gt1, ""),
    ("ion", _m_gt1_s_or_t, ""), ("ou", _m_gt1, ""), ("ism", _m_gt1, ""), ("ate", _m_gt1, ""),
    ("iti", _m_gt1, ""), ("ous", _m_gt1, ""), ("ive", _m_gt1, ""), ("ize", _m_gt1, ""),
)  # fmt: skip


def _by_second_last(rules):
    table: dict[str, list] = {}
    for suffix, cond, out in rules:
        table.setdefault(suffix[-2], []).append((suffix, cond, out))
    return table


_STEPS = [_by_second_last(rules) for rules in (_STEP2, _STEP3, _STEP4)]


def _apply(word: str, table) -> str:
    n = len(word)
    if n < 2:
        return word
    for suffix, cond, out in table.get(word[n - 2], ()):
        if n > len(suffix) and word.endswith(suffix):
            stem = n - len(suffix)
            return word[:stem] + out if cond(word, stem) else word
    return word


def _step1b(word: str) -> tuple[str, bool]:
    n = len(word)
    if word[n - 2] == "e":
        if n > 3 and word.endswith("eed"):
            return (word[:-1], False) if _m_gt0(word, n - 3) else (word, False)
        if n > 2 and word.endswith("ed"):
            return (word[:-2], True) if _has_vowel(word, n - 2) else (word, False)
    elif word[n - 2] == "n" and n > 3 and word.endswith("ing"):
        return (word[:-3], True) if _has_vowel(word, n - 3) else (word, False)
    return word, False


@lru_cache(maxsize=1 << 18)
def porter(token: str) -> str:
    """A token as FTS5's porter tokenizer writes it (tokens of 3 to 64 bytes are stemmed)."""
    raw = token.encode()
    if len(raw) > 64 or len(raw) < 3:
        return token
    # FTS5 stems bytes: one character per byte keeps every length test a byte count.
    return _stem(raw.decode("latin-1")).encode("latin-1").decode()


def _stem(w: str) -> str:
    # Step 1a.
    if w[-1] == "s":
        if w[-2] == "e":
            n = len(w)
            w = w[:-2] if (n > 4 and w[-4:-2] == "ss") or (n > 3 and w[-3] == "i") else w[:-1]
        elif w[-2] != "s":
            w = w[:-1]
    # Step 1b.
    w, stripped = _step1b(w)
    if stripped:
        n = len(w)
        if n > 2 and w[-2:] in ("at", "bl", "iz"):
            w += "e"
        else:
            c = w[-1]
            if not _vowel(c, False) and c not in "lsz" and c == w[-2]:
                w = w[:-1]
            elif _m_eq1(w, n) and _o_star(w, n):
                w += "e"
    # Step 1c.
    if w[-1] == "y" and _has_vowel(w, len(w) - 1):
        w = w[:-1] + "i"
    for table in _STEPS:
        w = _apply(w, table)
    # Step 5a.
    if w[-1] == "e":
        n = len(w) - 1
        if _m_gt1(w, n) or (_m_eq1(w, n) and not _o_star(w, n)):
            w = w[:-1]
    # Step 5b.
    if len(w) > 1 and w[-1] == "l" and w[-2] == "l" and _m_gt1(w, len(w) - 1):
        w = w[:-1]
    return w


@lru_cache(maxsize=1 << 18)
def _word_tokens(word: str) -> tuple[str, ...]:
    """The stemmed tokens of one space-free piece of text (a token never spans a space)."""
    return tuple(porter(_fold(run)) for run in _TOKEN_RUN.findall(word))


def tokens(keyed: str) -> list[str]:
    """The stemmed tokens FTS5 makes of a row's keyed text (or of a keyed query phrase)."""
    return [tok for word in keyed.split(" ") for tok in _word_tokens(word)]


def row_tokens(content: str, key: str) -> list[str]:
    """The tokens the FTS5 trigger indexes for a row of a scope with this key."""
    return tokens(keyed_text(content, key))


def phrase_tokens(term: str, key: str) -> tuple[str, ...]:
    """A query term (retrieval.fts_terms) as the stemmed tokens of its scoped phrase."""
    return tuple(tokens(" ".join(key + t for t in FTS_TOKEN.findall(term))))


# ---------------------------------------------------------------------------------------------
# The whole table's statistics, from FTS5's averages record (%_data rowid 1).


def _varint(blob: bytes, at: int) -> tuple[int, int]:
    """SQLite's varint (big-endian 7-bit groups; a ninth byte holds 8 bits)."""
    value = 0
    for i in range(8):
        byte = blob[at + i]
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at + i + 1
    return (value << 8) | blob[at + 8], at + 9


def table_totals(db: sqlite3.Connection) -> tuple[int, int]:
    """(rows, tokens) of the whole FTS table: FTS5's N and the numerator of its avgdl."""
    (blob,) = db.execute("SELECT block FROM long_term_fts_data WHERE id = 1").fetchone()
    rows, at = _varint(blob, 0)
    tokens_, _ = _varint(blob, at)
    return rows, tokens_


# ---------------------------------------------------------------------------------------------
# The index.


class _Growing:
    """A numpy array with spare capacity, appended to in place (as vectors._Matrix does)."""

    __slots__ = ("data", "n")

    def __init__(self, dtype, values: np.ndarray | None = None) -> None:
        """Empty, or holding a copy of values (with a quarter spare)."""
        n = 0 if values is None else len(values)
        self.data = np.empty(max(4, n + n // 4), dtype=dtype)
        self.n = n
        if n:
            self.data[:n] = values

    def append(self, value: int) -> None:
        if self.n == len(self.data):
            grown = np.empty(2 * self.n, dtype=self.data.dtype)
            grown[: self.n] = self.data[: self.n]
            self.data = grown
        self.data[self.n] = value
        self.n += 1

    def remove(self, value: int) -> int:
        """Drop value (present; the array sorted); its index."""
        i = int(np.searchsorted(self.data[: self.n], value))
        self.remove_at(i)
        return i

    def remove_at(self, i: int) -> None:
        self.data[i : self.n - 1] = self.data[i + 1 : self.n]
        self.n -= 1

    def view(self) -> np.ndarray:
        return self.data[: self.n]


class _Term:
    """A token's postings, each array sorted by row: the rows holding it with their term
    frequency (float64: bm25's aFreq), and its instance keys (row << 16 | position), which
    only a phrase of several tokens reads."""

    __slots__ = ("keys", "rows", "tf")

    def __init__(self) -> None:
        self.rows = _Growing(np.int64)
        self.tf = _Growing(np.float64)
        self.keys = _Growing(np.int64)

    def postings(self) -> tuple[np.ndarray, np.ndarray]:
        return self.rows.view(), self.tf.view()


@dataclass
class Postings:
    """One scope's rows (every status, as FTS5 indexes them) and its term postings.

    Rows are numbered in the order they were added (pk order when built); a row whose
    content changes is dropped and added again under a new number, so every posting list
    stays sorted by appending.
    """

    key: str
    pks: _Growing = field(default_factory=lambda: _Growing(np.int64))
    sizes: _Growing = field(default_factory=lambda: _Growing(np.int64))  # D, tokens per row
    active: _Growing = field(default_factory=lambda: _Growing(np.bool_))
    terms: dict[str, _Term] = field(default_factory=dict)
    row_of: dict[int, int] = field(default_factory=dict)  # pk -> row number
    row_terms: dict[int, list[str]] = field(default_factory=dict)  # row -> its tokens
    live: int = 0  # rows not dropped

    def add(self, pk: int, toks: list[str], active: bool) -> None:
        row = self.pks.n
        self.pks.append(pk)
        self.sizes.append(len(toks))
        self.active.append(active)
        self.row_of[pk] = row
        self.row_terms[row] = toks
        self.live += 1
        base = row << _POS_BITS
        for tok, count in Counter(toks).items():
            term = self.terms.get(tok)
            if term is None:
                term = self.terms[tok] = _Term()
            term.rows.append(row)
            term.tf.append(count)
        for position, tok in enumerate(toks):
            self.terms[tok].keys.append(base | position)

    def drop(self, pk: int) -> None:
        row = self.row_of.pop(pk)
        base = row << _POS_BITS
        toks = self.row_terms.pop(row)
        for position, tok in enumerate(toks):
            self.terms[tok].keys.remove(base | position)
        for tok in set(toks):
            term = self.terms[tok]
            term.tf.remove_at(term.rows.remove(row))
            if not term.rows.n:
                del self.terms[tok]
        self.active.data[row] = False
        self.live -= 1

    def set_active(self, pk: int, active: bool) -> None:
        self.active.data[self.row_of[pk]] = active

    def phrase(self, toks: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        """(rows holding the phrase, instances in each), the tokens adjacent in order."""
        first = self.terms.get(toks[0])
        if first is None:
            return _EMPTY
        if len(toks) == 1:
            return first.postings()
        keys = first.keys.view()
        for offset, tok in enumerate(toks[1:], start=1):
            term = self.terms.get(tok)
            if term is None:
                return _EMPTY
            keys = keys[np.isin(keys + offset, term.keys.view(), assume_unique=True)]
        if not len(keys):
            return _EMPTY
        rows, tf = np.unique(keys >> _POS_BITS, return_counts=True)
        return rows, tf.astype(np.float64)


_EMPTY = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64))


def _at(rows: np.ndarray, tf: np.ndarray, matched: np.ndarray) -> np.ndarray:
    """tf of each matched row (0 where the phrase is absent); rows sorted."""
    if not len(rows):
        return np.zeros(len(matched))
    i = np.searchsorted(rows, matched)
    i[i == len(rows)] = 0
    return np.where(rows[i] == matched, tf[i], 0.0)


def _union(lists: list[np.ndarray]) -> np.ndarray:
    """The sorted union of sorted row arrays (a sort: numpy's hash-based unique was slower)."""
    if len(lists) == 1:
        return lists[0]
    rows = np.concatenate(lists)
    if not len(rows):
        return rows
    rows.sort()
    return rows[np.concatenate(([True], rows[1:] != rows[:-1]))]


def _idf(n_rows: int, hits: int) -> float:
    idf = math.log((n_rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0.0 else 1e-6


def ranked(
    index: Postings, terms: list[str], k: int, n_rows: int, n_tokens: int
) -> list[tuple[int, float]]:
    """(pk, bm25) of the scope's top-k active rows for retrieval.fts_terms' terms, as
    fts.bm25_ranked returns them (lower is better; equal scores by pk)."""
    if not terms or not index.live:
        return []
    phrases = [phrase_tokens(term, index.key) for term in terms]
    posted = [index.phrase(p) for p in phrases]
    held = [len(rows) for rows, _ in posted]
    large = index.live > COMMON_TERM_ROWS
    rare = list(range(len(phrases)))
    common: list[int] = []
    if large and len(phrases) > 1:
        if min(held) > COMMON_TERM_ROWS:
            capped = [min(h, RAREST_ROWS) for h in held]
            rarest = capped.index(min(capped))
            rare = [rarest]
            common = [i for i in range(len(phrases)) if i != rarest]
        else:
            rare = [i for i, h in enumerate(held) if h <= COMMON_TERM_ROWS]
            common = [i for i, h in enumerate(held) if h > COMMON_TERM_ROWS]
        if not common:
            rare = list(range(len(phrases)))
    matched = _union([posted[i][0] for i in rare])
    matched = matched[index.active.data[matched]]
    if not len(matched):
        return []
    avgdl = n_tokens / n_rows
    d = index.sizes.data[matched].astype(np.float64)
    norm = K1 * (1 - B + B * d / avgdl)
    tfs = {i: _at(*posted[i], matched) for i in range(len(phrases))}

    def add(score: np.ndarray, order: list[int], where: np.ndarray | None) -> None:
        for i in order:
            tf = tfs[i] if where is None else np.where(where, tfs[i], 0.0)
            score += _idf(n_rows, held[i]) * ((tf * (K1 + 1.0)) / (tf + norm))

    score = np.zeros(len(matched))
    if common:
        with_common = np.zeros(len(matched), dtype=bool)
        for i in common:
            with_common |= tfs[i] > 0
        add(score, rare, ~with_common)  # (R) NOT (C): only its R phrases count
        add(score, common + rare, with_common)  # (C) AND (R): C's, then R's
    else:
        add(score, rare, None)
    bm25 = -score
    pks = index.pks.data[matched]
    best = np.lexsort((pks, bm25))[:k]
    return [(int(pks[i]), float(bm25[i])) for i in best]


def build(db: sqlite3.Connection, user_id: str, agent_id: str = "") -> Postings:
    """The scope's postings from long_term, tokenized here (as a process would cold): every
    row's tokens numbered, then sorted by (token, row, position) in numpy and cut per token."""
    (scope_id,) = db.execute(
        "SELECT id FROM fts_scopes WHERE user_id = ? AND agent_id = ?", (user_id, agent_id)
    ).fetchone()
    index = Postings(scope_key(scope_id))
    rows = db.execute(
        "SELECT pk, content, status = 'active' FROM long_term"
        " WHERE user_id = ? AND agent_id = ? ORDER BY pk",
        (user_id, agent_id),
    ).fetchall()
    numbered: dict[str, int] = {}
    flat: list[int] = []
    for row, (_, content, _) in enumerate(rows):
        toks = index.row_terms[row] = row_tokens(content, index.key)
        flat += [numbered.setdefault(tok, len(numbered)) for tok in toks]
    n = len(rows)
    sizes = np.array([len(index.row_terms[row]) for row in range(n)], dtype=np.int64)
    index.pks = _Growing(np.int64, np.array([r[0] for r in rows], dtype=np.int64))
    index.sizes = _Growing(np.int64, sizes)
    index.active = _Growing(np.bool_, np.array([bool(r[2]) for r in rows]))
    index.row_of = {pk: row for row, (pk, _, _) in enumerate(rows)}
    index.live = n
    if not flat:
        return index
    term = np.array(flat, dtype=np.int64)
    row_no = np.repeat(np.arange(n, dtype=np.int64), sizes)
    position = np.arange(len(term)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    order = np.lexsort((position, row_no, term))
    term, keys, row_no = term[order], (row_no << _POS_BITS | position)[order], row_no[order]
    cuts = np.searchsorted(term, np.arange(len(numbered) + 1))
    pair = term * n + row_no  # one per (token, row): the row's tf is its run length
    first = np.concatenate(([True], pair[1:] != pair[:-1]))
    starts = np.flatnonzero(first)
    tf = np.diff(np.append(starts, len(pair))).astype(np.float64)
    pair_cuts = np.searchsorted(starts, cuts)
    for tok, t in numbered.items():
        entry = index.terms[tok] = _Term()
        entry.keys = _Growing(np.int64, keys[cuts[t] : cuts[t + 1]])
        entry.rows = _Growing(np.int64, row_no[starts[pair_cuts[t] : pair_cuts[t + 1]]])
        entry.tf = _Growing(np.float64, tf[pair_cuts[t] : pair_cuts[t + 1]])
    return index


# ---------------------------------------------------------------------------------------------
# Kept current through a change log, as the numpy vector index is through vector_log.

# A log of every long_term row change the index cares about (text, status, scope, deletion),
# fed by triggers; bench_postings adds it to its copies of a store (memman has no such table).
LOG_DDL = (
    "CREATE TABLE postings_log (seq INTEGER PRIMARY KEY, pk INTEGER NOT NULL)",
    "CREATE TRIGGER postings_log_ai AFTER INSERT ON long_term"
    " BEGIN INSERT INTO postings_log (pk) VALUES (new.pk); END",
    "CREATE TRIGGER postings_log_au AFTER UPDATE OF content, status, user_id, agent_id"
    " ON long_term BEGIN INSERT INTO postings_log (pk) VALUES (new.pk); END",
    "CREATE TRIGGER postings_log_ad AFTER DELETE ON long_term"
    " BEGIN INSERT INTO postings_log (pk) VALUES (old.pk); END",
)


class LiveIndex:
    """Postings per scope in this process, brought up to date from postings_log before each
    query: one statement when nothing changed, two (the log, then the changed rows) else.

    A prototype: no rollback detection (vectors.py's seq token), no pruning, no LRU bound.
    """

    def __init__(self) -> None:
        self.scopes: dict[tuple[str, str], Postings] = {}
        self.seq = 0

    def current(self, db: sqlite3.Connection, user_id: str, agent_id: str) -> Postings:
        scope = (user_id, agent_id)
        if scope not in self.scopes:
            self.seq = db.execute("SELECT coalesce(max(seq), 0) FROM postings_log").fetchone()[0]
            self.scopes[scope] = build(db, user_id, agent_id)
            return self.scopes[scope]
        log = db.execute("SELECT seq, pk FROM postings_log WHERE seq > ?", (self.seq,)).fetchall()
        if log:
            self.seq = log[-1][0]
            self._apply(db, sorted({pk for _, pk in log}))
        return self.scopes[scope]

    def _apply(self, db: sqlite3.Connection, pks: list[int]) -> None:
        marks = ",".join("?" * len(pks))
        found = {
            pk: (content, bool(active), (user_id, agent_id))
            for pk, content, active, user_id, agent_id in db.execute(
                "SELECT pk, content, status = 'active', user_id, agent_id FROM long_term"
                f" WHERE pk IN ({marks})",
                pks,
            )
        }
        for scope, index in self.scopes.items():
            for pk in pks:
                content, active, where = found.get(pk, (None, False, None))
                if where != scope:
                    if pk in index.row_of:
                        index.drop(pk)
                    continue
                toks = row_tokens(content, index.key)
                row = index.row_of.get(pk)
                if row is not None and index.row_terms[row] == toks:
                    index.set_active(pk, active)
                    continue
                if row is not None:
                    index.drop(pk)
                index.add(pk, toks, active)
