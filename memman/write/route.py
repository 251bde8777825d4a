"""Routing: settle the clear cases cheaply and send only the ambiguous rest to a decider."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from memman.language.reader import READER
from memman.write.retrieval import Retrieved

log = logging.getLogger(__name__)


class RouteKind(StrEnum):
    NOVEL = "novel"  # nothing similar: ADD, no decider
    DUPLICATE = "duplicate"  # near-identical to one memory: NOOP, no decider
    AMBIGUOUS = "ambiguous"  # related memories exist: the decider chooses


@dataclass(frozen=True)
class Route:
    kind: RouteKind
    reason: str
    related: list[Retrieved] = field(default_factory=list)  # shown to the decider, best first
    measure: str = "Jaccard"  # which similarity settled it: "Jaccard" or "cosine"
    # With an LLM, of `related`: those the router's own signals relate to the fact (its words
    # or meaning past the novel thresholds, its subject and attribute), before the union a
    # decider is shown adds the rest.
    near: frozenset[str] = frozenset()

    @property
    def target(self) -> Retrieved | None:
        return self.related[0] if self.kind is RouteKind.DUPLICATE else None

    def scores(self) -> dict[str, dict[str, float]]:
        """Similarity of each related memory, for the audit trail."""
        return similarity_scores(self.related)


def similarity_scores(retrieved: list[Retrieved]) -> dict[str, dict[str, float]]:
    """Each memory's similarity to the candidate, by id: what the audit trail records."""
    return {r.memory.id: _scores(r) for r in retrieved}


def _scores(r: Retrieved) -> dict[str, float]:
    values = {"jaccard": r.jaccard, "bm25": r.bm25, "cosine": r.cosine}
    return {name: round(value, 4) for name, value in values.items() if value is not None}


@dataclass(frozen=True)
class Thresholds:
    """Where "the same fact" and "a new fact" begin, for one similarity measure."""

    name: str  # "Jaccard" or "cosine", for the reasons shown in the audit trail
    noop: float
    novel: float


def route(
    candidate: str,
    retrieved: list[Retrieved],
    *,
    noop_jaccard: float,
    novel_jaccard: float,
    cosine: Thresholds | None = None,
) -> Route:
    """NOVEL, DUPLICATE or AMBIGUOUS from the retrieved memories' similarity to the candidate.

    With an embedder (`cosine` thresholds given and cosines retrieved) the cosine decides,
    because it sees paraphrases; a memory whose cosine is missing (not yet reindexed) falls
    back to its Jaccard, and one whose words relate it (Jaccard at novel_jaccard) is related
    whatever its cosine. A lexical near-copy is a duplicate either way: "I really like
    Metallica" has the same words as "I like Metallica." but MiniLM puts them below
    noop_cosine, and without this check the embedder made such restatements ambiguous.
    A candidate an active memory already says word for word, and more, is a duplicate of it
    too (_container), whatever the similarity.
    """
    jaccard = Thresholds("Jaccard", noop_jaccard, novel_jaccard)
    if cosine is not None:
        copy = _lexical_copy(candidate, retrieved, noop_jaccard)
        if copy is not None:
            reason = f"near-identical to an existing memory (Jaccard {copy.jaccard:.2f})"
            return Route(RouteKind.DUPLICATE, reason, [copy], jaccard.name)
    container = _container(candidate, retrieved)
    if container is not None:
        reason = "an existing memory already says this word for word, and more"
        return Route(RouteKind.DUPLICATE, reason, [container], jaccard.name)

    def measure(r: Retrieved) -> tuple[Thresholds, float]:
        if cosine is not None and r.cosine is not None:
            return cosine, r.cosine
        return jaccard, r.jaccard

    def score(r: Retrieved) -> float:
        return measure(r)[1]

    # Each signal keeps its own bar: a memory the words relate (Jaccard at the novel bar)
    # stays related whatever its cosine, so an embedder never shows less than words alone.
    related = sorted(
        (r for r in retrieved if score(r) >= measure(r)[0].novel or r.jaccard >= jaccard.novel),
        key=score,
        reverse=True,
    )
    if not related:
        best = max(retrieved, key=score, default=None)
        if best is None:
            reason = "no similar memory"
        else:
            kind, value = measure(best)
            reason = f"no memory is similar enough (best {kind.name} {value:.2f} < {kind.novel})"
        result = Route(RouteKind.NOVEL, reason)
    else:
        kind, value = measure(related[0])
        if value < kind.noop:
            why = f"{len(related)} related memories (best {kind.name} {value:.2f})"
            result = Route(RouteKind.AMBIGUOUS, why, related)
        else:
            result = _near_route(candidate, related, measure, cosine)
    log.debug("route %s: %s", result.kind, result.reason)
    return result


def _near_route(
    candidate: str,
    related: list[Retrieved],
    measure: Callable[[Retrieved], tuple[Thresholds, float]],
    cosine: Thresholds | None,
) -> Route:
    """DUPLICATE of the nearest memory the candidate restates; else AMBIGUOUS, saying why the
    nearest one is not the same. Not only the nearest: another memory as near may say the
    candidate exactly ("I do not have a car" after "I have a car", first by Jaccard with the
    negation differing, and "I don't have a car", the same statement). The caller passes
    `related` nearest first, the first at or above its noop threshold, so a reason exists."""
    reasons = []
    for r in related:
        kind, value = measure(r)
        if value < kind.noop:
            continue
        why = _unlike(candidate, r.memory.content, kind, value, cosine)
        if why is None:
            reason = f"near-identical to an existing memory ({kind.name} {value:.2f})"
            return Route(RouteKind.DUPLICATE, reason, [r], kind.name)
        reasons.append(why)
    return Route(RouteKind.AMBIGUOUS, reasons[0], related)


def _unlike(
    candidate: str, closest: str, kind: Thresholds, value: float, cosine: Thresholds | None
) -> str | None:
    """Why the candidate, near `closest` by the measure, is not a restatement of it (None: it
    is one): a difference of meaning (roles.meaning_difference) or words the candidate adds."""
    paraphrase = kind is cosine
    restated = paraphrase and _restated(candidate, closest, value, kind)
    vouched = paraphrase and _vouched(value, kind)
    differs = READER.meaning_difference(candidate, closest, roles=not restated, vouched=vouched)
    if differs:
        return f"near-identical to a memory, but {differs}"
    added = READER.added_words(candidate, closest, paraphrase_aware=paraphrase)
    if added:
        return f"near-identical, but the candidate adds {', '.join(sorted(added))}"
    return None


# A long statement said again in other words. roles.meaning_difference's role rules (order,
# prepositions, pronouns, quantifiers) are built for short statements, where one word is the
# whole difference ("the turtle follows the fish", "gets into" / "out of the car"); a long one
# said again moves clauses and attributions and trades a preposition ("found the evidence in 2
# computers" / "on two computers", "..., Kaye said" / "Kaye said ..."), and there the cosine
# tells a rewording from another fact. Measured with MiniLM on every pair of bench_pairs' sets
# that the role rules refuse with both texts this long: the distinct sets' cosines reach 0.959
# (MRPC 0, 116 pairs), 0.69 (STS-B <= 2) and 0.89 (SICK NEUTRAL); at 0.965 or more lie 46 MRPC
# paraphrases, 7 STS-B and 1 SICK. SICK's role swaps are shorter (2 refused pairs this long,
# cosine <= 0.89), and so are most chat facts: they keep every rule.
_LONG_STATEMENT = 11  # content words in each text
_RESTATED_SHARE = 0.3  # of the way from noop_cosine to 1: MiniLM's 0.95 gives 0.965


# A rewording the cosine vouches for (roles.meaning_difference's `vouched`: clauses may move
# as long as no roles trade places, and on / at / in name one place): a cosine 10 % of the way
# from noop_cosine to 1 (MiniLM: 0.955). Just above noop_cosine lies an MRPC 0 pair whose only
# difference the order test caught ("Palm plans to issue about 13.9 million shares ... on a
# fully diluted basis" / "Palm will issue ...", 0.952); at >= 0.955, 8 MRPC 1, 9 STS-B and 5
# SICK ENTAIL paraphrases of bench_pairs' sample pass and no distinct pair does.
_VOUCHED_SHARE = 0.1


def _vouched(value: float, cosine: Thresholds) -> bool:
    """The cosine is near enough to 1 to vouch for a rewording (not for roles traded)."""
    return value >= cosine.noop + _VOUCHED_SHARE * (1 - cosine.noop)


def _restated(candidate: str, closest: str, value: float, cosine: Thresholds) -> bool:
    """Both texts long and their cosine near 1: only a negation or a number still differs."""
    if value < cosine.noop + _RESTATED_SHARE * (1 - cosine.noop):
        return False
    shorter = min(len(READER.content_tokens(candidate)), len(READER.content_tokens(closest)))
    return shorter >= _LONG_STATEMENT


def _lexical_copy(candidate: str, retrieved: list[Retrieved], noop: float) -> Retrieved | None:
    """The memory the candidate repeats word for word (the router's Jaccard NOOP test), if any:
    the nearest by Jaccard that no meaning difference or added word sets apart (another as
    near may differ: see _near_route)."""
    near = sorted((r for r in retrieved if r.jaccard >= noop), key=lambda r: -r.jaccard)
    for r in near:
        closest = r.memory.content
        if not READER.meaning_difference(candidate, closest) and not READER.added_words(
            candidate, closest, paraphrase_aware=False
        ):
            return r
    return None


def _container(candidate: str, retrieved: list[Retrieved]) -> Retrieved | None:
    """The most similar memory that holds the candidate's wording and more (wording.extends).

    After "likes jazz" -> "likes jazz and blues" was an UPDATE, "likes jazz" said again is
    known, not a new row beside the memory that extended it.
    """
    holders = [r for r in retrieved if READER.extends(r.memory.content, candidate)]
    return max(holders, key=lambda r: r.jaccard, default=None)
