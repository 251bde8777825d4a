"""Whether two texts with (nearly) the same words say the same thing: roles, not words.

The cheap tiers' NOOPs (the router's Jaccard and cosine duplicates, recall's fold, wording's
elaborations) all pass meaning_difference: the same negations and numbers, the shared words
in the same order (a passive read as its active, a relative clause's modifiers before their
noun, an attribution or a long statement's clauses allowed to move), and the same
prepositions, particles, quantifiers and pronouns (a possessive read as its subject form).
Where the router's cosine near 1 vouches for a rewording, clauses may move as long as no roles
trade places, and on, at and in name one place. Built on memman/language/text.py's words.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter

from memman.language import rulebook
from memman.language.text import (
    STOPWORDS,
    _stem,
    content_tokens,
    jaccard,
    negations,
    normalize,
    numbers,
    words,
)

# Words that give the content words their roles. STOPWORDS drops them for Jaccard, yet "gets
# into" / "out of the car", "goes up" / "down the hill", "behind" / "in front of the crowd"
# and "lots of" / "few people" say different things (SICK's NEUTRAL pairs are full of them).
# "front", "top" and "next" carry the compound prepositions ("in front of", "on top of",
# "next to"); "of" and "as" carry no direction and are left out.
PARTICLES = rulebook.words("roles", "words", "particles")
# Spellings of the same direction: "gets into the car" is "gets in the car".
_SAME_ROLE = rulebook.mapping("roles", "same_role")
_COMPOUND_PREPOSITIONS = rulebook.mapping("roles", "compound_prepositions")
# Quantifiers are stopwords too, but "all", "few" or "only" changes what is said ("some",
# "any", "each" and "every" do not: "some people are singing" is "people are singing", "runs
# every Sunday" is "runs each Sunday" is "runs on Sundays").
QUANTIFIERS = rulebook.words("roles", "words", "quantifiers")
# "a few" is "some" ("A few children are jumping" / "Some children are jumping", SICK's
# entailments): it counts nothing "some" does not. "few" alone ("few people came") says "not
# many" and stays a quantifier.
_A_FEW = rulebook.listed("roles", "listed", "a_few")
# Pronouns tell who does what to whom ("he helps her" / "she helps him"); a fact that names
# nobody ("Favourite colour is green") is not contradicted by one that says "my" (_conflict).
PRONOUNS = rulebook.words("roles", "words", "pronouns")

# A possessive or reflexive pronoun names the same one as the subject form: "when it bought
# the assets" / "from its developer", "it's possible" (read "its") / "it is possible". Object
# forms stay apart ("he helps her" / "she helps him"), and so do the counts: "his brother
# helps him" / "he helps his brother" is one "he" and one "him" against two "he". A group's
# possessive is "its" or "their" by style ("the companies ... their drugs" / "a company ... its
# drugs", "the US and its allies" / "Americans and their allies": MRPC paraphrases), so
# "their" reads as "its" does; "they" and "them" stay apart from "it".
_OWNER = {
    w: group.split()[0]
    for group in rulebook.listed("roles", "listed", "owners")
    for w in group.split()[1:]
}


def _pronoun_conflict(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """_conflict, and still so with possessives read as their subject form, repeats counted."""
    owners_a, owners_b = Counter(_OWNER.get(w, w) for w in a), Counter(_OWNER.get(w, w) for w in b)
    return _conflict(a, b) and bool(owners_a - owners_b) and bool(owners_b - owners_a)


def _role_words(text: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(particles, quantifiers, pronouns) of a text, each sorted, with their repeats.

    A compound preposition counts as its noun alone: "in front of" is "front", so it differs
    from "in" ("standing in front of a hut" / "in a hut").
    """
    found = [_SAME_ROLE.get(w, w) for w in words(text)]
    particles = [w for w in found if w in PARTICLES]
    for noun, opener in _COMPOUND_PREPOSITIONS.items():
        if noun in particles and opener in particles:
            particles.remove(opener)
    return (
        tuple(sorted(particles)),
        tuple(sorted(w for i, w in enumerate(found) if w in QUANTIFIERS and _counts(found, i))),
        tuple(sorted(w for w in found if w in PRONOUNS)),
    )


# Where a thing is, said with another of the three place prepositions: "does a back bend on
# / at the beach", "chasing a ball on / in the grass" (STS-B and SICK paraphrases). Where a
# cosine near 1 vouches for the rewording (`vouched`) on and at read as in throughout. On
# bench_pairs' MiniLM sample the distinct pair nearest to passing this way is SICK NEUTRAL's
# "eating on a really small wagon full of corndogs" / "eating corndogs in a wagon, which is
# really small" (0.963), which the order test refuses. Without that cosine see _traded_place.
_PLACE = rulebook.mapping("roles", "place")


def _places(particles: tuple[str, ...]) -> tuple[str, ...]:
    """The particles with on and at read as in."""
    return tuple(_PLACE.get(w, w) for w in particles)


# One place preposition traded for another, and nothing else: "running through / in the
# grass", "waiting at / in a station", "running through / on a snowy path" (STS-B and SICK
# paraphrases, most below any cosine that vouches: MiniLM puts them at 0.85-0.95). Only as a
# trade: each text's place word the other lacks stands for the other's, so a place said beside
# other particles stays apart ("walking in the water" / "on a leash and walking out of the
# water": in against out; "opened fire in Baghdad" / "... threw stones at officers" with "for"
# and "to" gone). Measured on every pair of bench_pairs' sets (offline): the verdict changes
# for 90 STS-B <= 2, 14 MRPC 0 and 154 SICK NEUTRAL pairs, none at Jaccard 0.8 or more
# (highest 0.75), and on the MiniLM sample their cosines reach 0.90. The cost, said out
# loud: "the keys are on / in the box" is one fact now, with or without an embedder.
_PLACE_WORDS = rulebook.words("roles", "words", "place_words")


def _traded_place(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """_conflict, and still so once a place word only `a` says and one only `b` says are
    taken as one place."""
    only_a, only_b = set(a) - set(b), set(b) - set(a)
    if only_a & _PLACE_WORDS and only_b & _PLACE_WORDS:
        only_a, only_b = only_a - _PLACE_WORDS, only_b - _PLACE_WORDS
    return bool(only_a) and bool(only_b)


# "both" before a pair it names ("said both EPI and Pratt & Whitney had presented") counts
# nothing the pair does not: "said EPI and Pratt & Whitney had presented" says the same. Said
# after ("paper and scissors both cut") or alone ("were both linked") it stays a quantifier.
_PAIR_WORDS = 2  # "and" within this many words after the first name: "both Mr Blair and"


def _pairs(found: list[str], at: int) -> bool:
    """found[at] is "both" opening "both X and Y"."""
    return found[at] == "both" and "and" in found[at + 2 : at + 2 + _PAIR_WORDS]


def _counts(found: list[str], at: int) -> bool:
    """The quantifier found[at] counts: not "both" opening a pair, not the "few" of "a few"."""
    return not _pairs(found, at) and tuple(found[at - 1 : at + 1]) != _A_FEW


def _conflict(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Each side has a word the other lacks: "into" / "out", "on" / "off".

    One side's extra word alone is allowed: "climbs a rope" / "climbs up a rope", "likes
    green tea in the morning" / "every morning" say the same (bench_pairs: STS-B and SICK
    paraphrases differ that way far more often than their distinct pairs do).
    """
    return bool(set(a) - set(b)) and bool(set(b) - set(a))


# A modifier said in a relative clause is the same modifier: "the dog, which is black and
# white, is running" is "the black and white dog is running" (SICK's entailments say it both
# ways). For the order test the clause's words go before the noun it follows. A clause that
# names a place or a role ("which is in the air", "who is chasing a cat", "which is a puppy":
# a particle, an -ing verb or an article) or runs past _MODIFIER_WORDS stays where it is.
_RELATIVE = rulebook.words("roles", "words", "relative")
_COPULA = rulebook.words("roles", "words", "copula")
_NOT_A_MODIFIER = rulebook.words("roles", "words", "not_a_modifier")
_MODIFIER_WORDS = 5
_PIECE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*|[,;]")


def _modifiers_first(text: str) -> list[str]:
    """words(text), with each short relative clause of modifiers before the noun it follows."""
    pieces = _active([p.replace("'", "").replace("’", "") for p in _PIECE.findall(normalize(text))])
    result: list[str] = []
    i = 0
    while i < len(pieces):
        end = _modifier_clause_end(pieces, i)
        if end is not None and result and result[-1] not in STOPWORDS:
            result[-1:] = [*(w for w in pieces[i + 2 : end] if w != ","), result[-1]]
            i = end
            continue
        if pieces[i] not in (",", ";"):
            result.append(pieces[i])
        i += 1
    return result


def _modifier_clause_end(pieces: list[str], start: int) -> int | None:
    """Where the relative clause of modifiers at `start` ("which is black and white") ends."""
    if pieces[start] not in _RELATIVE or pieces[start + 1 : start + 2] not in (["is"], ["are"]):
        return None
    end = start + 2
    while end < len(pieces) and pieces[end] not in _COPULA and pieces[end] not in (",", ";"):
        end += 1
    if pieces[end : end + 1] == [","] and not _COPULA & set(pieces[end:]):
        end = len(pieces)  # a list to the end: "uniforms which are black, pink and white"
    moved = [w for w in pieces[start + 2 : end] if w != ","]
    if not moved or len(moved) > _MODIFIER_WORDS:
        return None
    if any(w in PARTICLES or w in _NOT_A_MODIFIER or w.endswith("ing") for w in moved):
        return None
    return end


# A passive says the same roles the other way round: "a wooden flute is being played by a
# man" is "a man is playing a wooden flute" (SICK's entailments say it both ways). For the
# order test the agent ("by" and what follows, up to a particle, a comma, "and" or a relative
# pronoun) comes first, then the verb, then the subject (back to the clause's start).
_CLAUSE_ENDS = frozenset({",", ";", "and", *_RELATIVE})


def _clause_end(pieces: list[str], at: int) -> bool:
    """A clause ends at `at`: punctuation, a relative pronoun, or "and" before an article
    ("... floor and the ball is being grabbed"; "blue and black pants" is one phrase)."""
    if pieces[at] == "and":
        return pieces[at + 1 : at + 2] in (["a"], ["an"], ["the"])
    return pieces[at] in _CLAUSE_ENDS


def _active(pieces: list[str]) -> list[str]:
    """The pieces with their first "X is being V by Y" said as "Y V X"."""
    for i in range(1, len(pieces) - 4):
        if pieces[i] in _COPULA and pieces[i + 1] == "being" and pieces[i + 3] == "by":
            start = max((j + 1 for j in range(i) if _clause_end(pieces, j)), default=0)
            end = i + 4
            while end < len(pieces) and pieces[end] not in _CLAUSE_ENDS | PARTICLES:
                end += 1
            agent, verb, subject = pieces[i + 4 : end], pieces[i + 2], pieces[start:i]
            by = pieces[i + 3]  # kept: a particle the other text may say too
            return [*pieces[:start], by, *agent, verb, *subject, *pieces[end:]]
    return pieces


def _role_order(text: str, shared: frozenset[str]) -> list[str]:
    """The shared content tokens and particles in the order the text first says them, a
    relative clause's modifiers before their noun (_modifiers_first), a passive said as the
    active (_active)."""
    order: list[str] = []
    for w in _modifiers_first(text):
        token = _SAME_ROLE.get(w, w) if w in PARTICLES or w in _SAME_ROLE else _stem(w)
        if token in shared and token not in order:
            order.append(token)
    return order


def _same_order(a: list[str], b: list[str], *, moves: bool = False, clauses: bool = False) -> bool:
    """Equal, or equal but for two neighbours swapped or two clauses trading places (or,
    with `clauses`, moved anywhere without trading roles: _roles_traded).

    "drinks coffee black" / "drinks black coffee" swap neighbours; "a man plays guitar and a
    woman sings" / "a woman sings and a man plays guitar" trade two runs of two words or more.
    Neither moves a word from subject to object: that takes a verb or a preposition between
    them ("the turtle follows the fish", "the cat is on the mat"), which no such move gets
    past; a single word moved further ("a straw hat" / "a straw cigarette") is refused.
    """
    if a == b:
        return True
    # Both list the same shared words once each: they differ from `first` up to `last`.
    first = next(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
    last = len(a) - next(i for i, (x, y) in enumerate(zip(a[::-1], b[::-1], strict=True)) if x != y)
    span_a, span_b = a[first:last], b[first:last]
    if len(span_a) == 2:
        return True  # two neighbours swapped
    if any(span_b == span_a[cut:] + span_a[:cut] for cut in range(2, len(span_a) - 1)):
        return True
    if clauses and len(a) >= _CLAUSE_WORDS and not _roles_traded(a, b):
        return True
    return moves and _clauses_moved(a, b)


# Clauses reordered, roles kept: "intends to declare her innocence and proceed to trial if she
# is indicted" / "intends to declare her innocence if indicted and proceed to trial", "some
# brain damage is possible if they survive" / "if they survive, some brain damage is
# possible" (MRPC paraphrases). A role swap trades two
# words across a third ("the turtle follows the fish" / "the fish follows the turtle":
# turtle, follows, fish read backwards); moving a clause or a phrase as a whole never does
# (_roles_traded). Allowed only where a cosine near 1 vouches for it (meaning_difference's
# `vouched`) and with _CLAUSE_WORDS shared words or more: measured on bench_pairs' MiniLM
# sample, the SICK NEUTRAL pairs the order test refuses with no traded roles and 6 shared
# words have cosines up to 0.985 ("the man in the hat is smoking a straw cigarette" / "in
# the straw hat ... a cigarette": one word moved to another noun); with 7 or 8 their highest
# is 0.945.
_CLAUSE_WORDS = 7


def _roles_traded(a: list[str], b: list[str]) -> bool:
    """Some word has one word before it in `a` and after it in `b`, and another the other
    way round: x, p, y in `a` are y, p, x in `b` (each list holds the same words once)."""
    where = {w: i for i, w in enumerate(b)}
    for i, p in enumerate(a):
        moved_after = any(where[x] > where[p] for x in a[:i])
        moved_before = any(where[y] < where[p] for y in a[i + 1 :])
        if moved_after and moved_before:
            return True
    return False


# A long statement whose clauses moved: news paraphrases move attributions and clauses ("...,
# Kaye said" / "Kaye said ...", "belonged to a party or had no affiliation" / the reverse).
# Measured on the shared words of pairs the order test refused (bench_pairs, Jaccard >= 0.8):
# SICK's role swaps share 3-11 words and keep at most 0.71 of their neighbours; MRPC's and
# STS-B's paraphrases share 7-23 and mostly keep 0.6 or more. Only between texts of nearly
# the same words (_MOVED_OVERLAP): with MiniLM, a clause moved and another added ("While the
# shape of any operation is unclear, Jakarta has boosted ...", MRPC 0) passed as a NOOP.
_LONG = 12
_NEIGHBOURS_KEPT = 0.6
_MOVED_OVERLAP = 0.8


def _clauses_moved(a: list[str], b: list[str]) -> bool:
    """At least _LONG shared words, and most neighbours of `b` neighbours in `a` too."""
    if len(a) < _LONG:
        return False
    position = {w: i for i, w in enumerate(a)}
    kept = sum(position[y] == position[x] + 1 for x, y in itertools.pairwise(b))
    return kept >= _NEIGHBOURS_KEPT * (len(b) - 1)


# An attribution ("Kaye said", "said Steve Anderson, a Waco official") stands outside the
# statement it reports: news paraphrases move it from the end to the front (MRPC) and the
# statement's roles stay put. A clause is a run between punctuation; a short one holding a
# reporting verb is the attribution, and its words are left out of the order test when both
# texts report the statement with the same verb.
_REPORTING = rulebook.words("roles", "words", "reporting")
_CLAUSE_BREAK = re.compile(r"[,;:\"“”«»()]|--| - | — ")
_ATTRIBUTION_WORDS = 6


def _attribution(text: str) -> frozenset[str]:
    """Content tokens of the text's short clauses that hold a reporting verb."""
    found: set[str] = set()
    for clause in _CLAUSE_BREAK.split(text):
        clause_words = words(clause)
        if len(clause_words) <= _ATTRIBUTION_WORDS and _REPORTING & set(clause_words):
            found.update(content_tokens(clause))
    return frozenset(found)


def meaning_difference(a: str, b: str, *, roles: bool = True, vouched: bool = False) -> str | None:
    """Why two texts with (nearly) the same words may still say different things, or None.

    The one test every cheap NOOP passes (the router's Jaccard and cosine duplicates, recall's
    fold): a negation or a number differs (polarity_or_number_differs), the shared content
    words come in another order ("the turtle follows the fish" / "the fish follows the
    turtle"; an attribution moved, "..., Kaye said" / "Kaye said ...", is not another
    order: _attribution), or a preposition, particle, quantifier or pronoun differs ("into" /
    "out of", "on" / "off", "behind" / "in front of", "he helps her" / "she helps him").
    With `roles=False` only the negation and number tests apply: the router's restated long
    statement (route._restated), whose cosine already tells a rewording from another fact.
    With `vouched=True` (the router's cosine near 1: route._vouched) the shared words may come
    in another order as long as no two of them trade roles (_same_order), and on, at and in
    are one place preposition (_places).
    """
    if negations(a) != negations(b):
        return "a negation differs"
    if numbers(a) != numbers(b):
        return "a number differs"
    if not roles:
        return None
    (particles_a, quantifiers_a, pronouns_a), (particles_b, quantifiers_b, pronouns_b) = (
        _role_words(a),
        _role_words(b),
    )
    tokens_a, tokens_b = content_tokens(a), content_tokens(b)
    shared = tokens_a & tokens_b | (set(particles_a) & set(particles_b))
    moves = jaccard(tokens_a, tokens_b) >= _MOVED_OVERLAP
    if _REPORTING & set(words(a)) & set(words(b)):
        shared = shared - _attribution(a) - _attribution(b)
    order_a, order_b = _role_order(a, shared), _role_order(b, shared)
    if not _same_order(order_a, order_b, moves=moves, clauses=vouched):
        return "the shared words come in another order"
    particles_differ = _traded_place(particles_a, particles_b)
    if vouched:
        particles_differ = particles_differ and _conflict(
            _places(particles_a), _places(particles_b)
        )
    if particles_differ:
        return "a preposition or particle differs"
    if quantifiers_a != quantifiers_b:
        return "a quantifier differs"
    if _pronoun_conflict(pronouns_a, pronouns_b):
        return "a pronoun differs"
    return None
