"""Finding near-duplicate long-term memories: consolidate's merge phase (lifecycle/merge.py)
merges what this module finds, in three steps, all on one scope:

1. `find_clusters` loads the scope's mergeable memories once (plain rows, no pydantic) and
   groups those with the same *wording*: the same words in the same order once case,
   punctuation, articles and a few filler words are set aside ("Also, I like the band." =
   "I like a band"). Such groups are one fact and merge without an LLM. Sharing content
   words alone is not enough: at Jaccard 0.8, 45 of 9,000 MSC persona facts were merged with
   a different fact ("I live in Salt Lake City" / "My girlfriend lives in Salt Lake City",
   "I like red more than green" / "I like green better than red"; benchmarks/RESULTS.md).
2. Groups whose content tokens overlap by at least `merge_related_jaccard` (same negations
   and numbers) are found by blocking through the FTS5 index with prefix filtering, which is
   exact: two token sets with Jaccard >= t share one of each set's first
   |x| - ceil(t|x|) + 1 tokens in a global rare-first order, so each group queries the index
   for those few rare tokens only, never all pairs. Groups are clustered with union-find; a
   cluster whose members are not all pairwise related is rejected (A~B~C with A!~C is a chain,
   not one fact). These clusters are ambiguous: only the LLM may merge them.
3. The merge phase shows each ambiguous cluster to the model (lifecycle/merge.py ask_llm).
"""

from __future__ import annotations

import hashlib
import json
import math
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import combinations

import sqlalchemy as sa

from memman.config import Settings
from memman.language.reader import READER
from memman.lifecycle.run import Progress, is_protected
from memman.scope import Scope
from memman.storage.fts import scoped_match
from memman.storage.store import Store

# An ambiguous cluster is one LLM call; beyond this many memories it is rejected instead (a
# lower merge_related_jaccard can chain whole topics together).
MAX_LLM_CLUSTER = 8


@dataclass(frozen=True)
class Row:
    """One mergeable memory as consolidate needs it (cheaper than a pydantic Memory)."""

    pk: int
    id: str
    content: str
    confidence: float
    access_count: int
    updated_at: str

    @property
    def rank(self) -> tuple[float, int, str]:
        """The representative of a cluster: highest confidence, then access count, newest."""
        return (self.confidence, self.access_count, self.updated_at)


def representative(rows: list[Row]) -> Row:
    return max(rows, key=lambda r: r.rank)


@dataclass
class Clusters:
    """What blocking found in one scope."""

    same_wording: list[list[Row]]  # groups of 2+ memories: merge without an LLM
    ambiguous: list[list[Row]]  # related group representatives: only the LLM may merge them
    rejected: list[list[str]] = field(default_factory=list)  # related, not mutually: a chain


def _load(store: Store, conn: sa.Connection, scope: Scope, settings: Settings) -> list[Row]:
    rows = store.merge_rows(conn, scope)
    return [
        Row(r.pk, r.id, r.content, r.confidence, r.access_count, r.updated_at)
        for r in rows
        if not is_protected(r.category, r.confidence, settings)
    ]


def _find(parent: list[int], x: int) -> int:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def _related(a: str, b: str, tokens_a: frozenset[str], tokens_b: frozenset[str], t: float) -> bool:
    return (
        READER.jaccard(tokens_a, tokens_b) >= t
        and READER.negations(a) == READER.negations(b)
        and READER.numbers(a) == READER.numbers(b)
    )


def _prefixes(tokens: list[frozenset[str]], threshold: float) -> list[frozenset[str]]:
    """Each set's first |x| - ceil(t|x|) + 1 tokens, rarest first (ties by the token).

    If Jaccard(x, y) >= t then |x & y| >= t * max(|x|, |y|), and two sets sharing that many
    tokens share a token of their prefixes in any one global order (prefix filtering,
    Chaudhuri et al. 2006): matching prefixes against prefixes loses no pair.
    """
    frequency: dict[str, int] = {}
    for ts in tokens:
        for token in ts:
            frequency[token] = frequency.get(token, 0) + 1
    prefixes = []
    for ts in tokens:
        ordered = sorted(ts, key=lambda token: (frequency[token], token))
        prefixes.append(frozenset(ordered[: len(ts) - math.ceil(threshold * len(ts) - 1e-9) + 1]))
    return prefixes


def _units_holding(
    store: Store,
    conn: sa.Connection,
    query: str,
    token: str,
    unit_of_pk: dict[int, int],
    prefixes: list[frozenset[str]],
) -> list[int]:
    """The units whose prefix holds token, found through the FTS index, ascending.

    query ORs every spelling of the token in the scope, each a quoted FTS5 phrase (words are
    letters and digits only, so no quote can occur): the index tokenizes each spelling as it
    tokenized the memories that hold it, so every one of them is found.
    """
    # Every row of the scope holding the term, unranked: prefix filtering needs the whole
    # posting list (the query is fts.scoped_match's, so it holds the scope).
    units = {unit_of_pk.get(pk, -1) for pk in store.fts_rowids(conn, query)}  # -1: protected
    return sorted(u for u in units if u >= 0 and token in prefixes[u])


def find_clusters(
    store: Store,
    conn: sa.Connection,
    scope: Scope,
    settings: Settings,
    progress: Progress | None = None,
) -> Clusters:
    """Same-wording groups and ambiguous clusters of the scope's mergeable memories."""
    by_wording: dict[tuple[str, ...], list[Row]] = {}
    for row in _load(store, conn, scope, settings):
        by_wording.setdefault(READER.wording(row.content), []).append(row)
    groups = list(by_wording.values())
    same = [g for g in groups if len(g) > 1]
    # Blocking runs on one representative per group: a group shares its content tokens.
    reps = [representative(g) for g in groups]
    spelled: dict[str, set[str]] = {}  # token -> every way the scope writes it
    tokens = []
    for r in reps:
        spellings = READER.token_spellings(r.content)
        tokens.append(frozenset(token for token, _ in spellings))
        for token, written in spellings:
            spelled.setdefault(token, set()).add(written)
    unit_of_pk = {row.pk: i for i, g in enumerate(groups) for row in g}
    threshold = settings.merge_related_jaccard
    prefixes = _prefixes(tokens, threshold)
    parent = list(range(len(groups)))
    postings: dict[str, list[int]] = {}  # token -> units whose prefix holds it, ascending
    key = store.fts_index_key(conn, scope) if reps else None
    for x, prefix in enumerate(prefixes):
        if progress is not None and x % 1000 == 0:
            progress("finding near-duplicates", x, len(tokens))
        size = len(tokens[x])
        seen: set[int] = set()
        for token in prefix:
            if token not in postings:
                spellings = " OR ".join(f'"{w}"' for w in sorted(spelled[token]))
                query = scoped_match(key, spellings) if key is not None else None
                postings[token] = (
                    []
                    if query is None
                    else _units_holding(store, conn, query, token, unit_of_pk, prefixes)
                )
            units = postings[token]
            for y in units[bisect_right(units, x) :]:  # each pair once, from its first unit
                if y in seen:
                    continue
                seen.add(y)
                if threshold * size <= len(tokens[y]) <= size / threshold and _related(
                    reps[x].content, reps[y].content, tokens[x], tokens[y], threshold
                ):
                    parent[_find(parent, y)] = _find(parent, x)
    if progress is not None:
        progress("finding near-duplicates", len(tokens), len(tokens))
    components: dict[int, list[int]] = {}
    for i in range(len(groups)):
        components.setdefault(_find(parent, i), []).append(i)
    ambiguous, rejected = [], []
    for members in components.values():
        if len(members) < 2:
            continue
        if len(members) > MAX_LLM_CLUSTER or not all(
            _related(reps[a].content, reps[b].content, tokens[a], tokens[b], threshold)
            for a, b in combinations(members, 2)
        ):
            rejected.append(sorted(reps[i].id for i in members))
        else:
            ambiguous.append([reps[i] for i in members])
    return Clusters(same_wording=same, ambiguous=ambiguous, rejected=rejected)


def cluster_key(rows: list[Row]) -> str:
    """Identifies a cluster by its members' ids and texts: any edit makes it a new question."""
    pairs = sorted((r.id, r.content) for r in rows)
    return hashlib.sha256(json.dumps(pairs).encode()).hexdigest()[:16]
