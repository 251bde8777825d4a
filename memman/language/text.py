"""Text normalisation and the cheap lexical signals the router relies on.

Everything here is pure and deterministic: the hash tier, the FTS query builder and the
lexical router all see a fact through these functions, so they agree on what a "word" is.
How a fact is worded (fillers, extensions, what it affirms) is memman/language/wording.py.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import unicodedata

from memman.memo import memoized

_WHITESPACE = re.compile(r"\s+")
_TRAILING_PUNCT = re.compile(r"[\s\.\!\?\,\;\:…。！？、]+$")
# A word is a run of letters/digits, apostrophes inside it kept as written ("o'neill"). words()
# then drops them ("don't" -> "dont", as NEGATIONS spells it); FTS5 instead splits there ("o",
# "neill"), which is why the query builder and merge blocking start from the written form.
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")

# Function words that carry no identity for a fact. "user" is here because extracted facts
# almost all start with "User ...": keeping it would make every pair look 20 % similar.
# Negations are deliberately NOT here: they are compared separately (see negations()).
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours yourself yourselves user users s t also really
    im ive youre youve theyre theyve weve hes shes thats whats theres heres
    """.split()
)  # the last line: contractions of stopwords, apostrophe removed ("I'm" is "im")

NEGATIONS = frozenset(
    """
    not no never none nobody nothing neither nor without cannot cant dont doesnt didnt isnt
    arent wasnt werent wont wouldnt shouldnt couldnt hasnt havent hadnt aint longer anymore
    stopped quit dislikes dislike hates hate
    """.split()
)


_NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "twenty": "20", "thirty": "30", "hundred": "100", "thousand": "1000", "million": "1e6",
    "billion": "1e9", "half": "0.5", "once": "1x", "twice": "2x",
}  # fmt: skip


def normalize(text: str) -> str:
    """The canonical form used for the content hash.

    NFKC folds compatibility characters (full-width letters, ligatures), casefold handles
    more than lower() (German ß), whitespace runs collapse, and trailing punctuation goes:
    "user prefers  FLAT white." and "User prefers flat white" are the same fact.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _TRAILING_PUNCT.sub("", _WHITESPACE.sub(" ", folded).strip())


def content_hash(text: str) -> str:
    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()


def written_words(text: str) -> list[str]:
    """All words of the normalised text, apostrophes kept ("o'neill", "macy’s"), in order."""
    return _WORD.findall(normalize(text))


def words(text: str) -> list[str]:
    """All words of the normalised text, apostrophes removed, in order."""
    return list(_words(text))


@memoized
def _words(text: str) -> tuple[str, ...]:
    return tuple(w.replace("'", "").replace("’", "") for w in written_words(text))


def _stem(word: str) -> str:
    # A deliberately tiny plural/third-person stemmer: "likes"/"like", "dogs"/"dog".
    # Anything smarter belongs to the semantic tier.
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@memoized
def content_tokens(text: str) -> frozenset[str]:
    """Stemmed words minus stopwords and negations: what a fact is about."""
    return frozenset(_stem(w) for w in _words(text) if w not in STOPWORDS and w not in NEGATIONS)


def token_spellings(text: str) -> set[tuple[str, str]]:
    """(content token, the word as written) for each content word: content_tokens' sources.

    FTS5's tokenizer splits "I'm" into "i" and "m" where content_tokens sees "im", so a token
    is found through the index by the words that spelled it, apostrophes kept.
    """
    spellings = set()
    for written in written_words(text):
        w = written.replace("'", "").replace("’", "")
        if w not in STOPWORDS and w not in NEGATIONS:
            spellings.add((_stem(w), written))
    return spellings


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@memoized
def negations(text: str) -> frozenset[str]:
    return frozenset(w for w in _words(text) if w in NEGATIONS)


@memoized
def numbers(text: str) -> frozenset[str]:
    """Numbers written with digits or as common words, normalised ("1,000" == "1000")."""
    found = {n.replace(",", "") for n in _NUMBER.findall(normalize(text))}
    found.update(_NUMBER_WORDS[w] for w in _words(text) if w in _NUMBER_WORDS)
    return frozenset(found)


def polarity_or_number_differs(a: str, b: str) -> bool:
    """True when two near-identical texts may still say opposite things.

    "User is vegetarian" / "User is not vegetarian" and "$2.5 billion" / "$1.8 billion" have
    almost the same tokens; treating them as duplicates would keep the stale value. Such a
    pair is never settled as NOOP by a cheap tier.
    """
    return negations(a) != negations(b) or numbers(a) != numbers(b)


# Words that give the content words their roles. STOPWORDS drops them for Jaccard, yet "gets
# into" / "out of the car", "goes up" / "down the hill", "behind" / "in front of the crowd"
# and "lots of" / "few people" say different things (SICK's NEUTRAL pairs are full of them).
# "front", "top" and "next" carry the compound prepositions ("in front of", "on top of",
# "next to"); "of" and "as" carry no direction and are left out.
PARTICLES = frozenset(
    """
    about above across after against along around at away back before behind below beside
    between beyond by down for from front in near next off on out outside over past since
    through to top toward under until up with within
    """.split()
)
# Spellings of the same direction: "gets into the car" is "gets in the car".
_SAME_ROLE = {
    "into": "in", "inside": "in", "onto": "on", "upon": "on", "towards": "toward",
    "beneath": "under", "underneath": "under",
}  # fmt: skip
_COMPOUND_PREPOSITIONS = {"front": "in", "top": "on", "next": "to"}
# Quantifiers are stopwords too, but "all", "few" or "only" changes what is said ("some",
# "any", "each" and "every" do not: "some people are singing" is "people are singing", "runs
# every Sunday" is "runs each Sunday" is "runs on Sundays").
QUANTIFIERS = frozenset("all both few many more most only several".split())
# Pronouns tell who does what to whom ("he helps her" / "she helps him"); a fact that names
# nobody ("Favourite colour is green") is not contradicted by one that says "my" (_conflict).
PRONOUNS = frozenset(
    """
    i me my mine myself we us our ours he him his himself she her hers herself it its they
    them their theirs you your yours
    """.split()
)


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
        tuple(sorted(w for w in found if w in QUANTIFIERS)),
        tuple(sorted(w for w in found if w in PRONOUNS)),
    )


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
_RELATIVE = frozenset({"which", "that", "who"})
_COPULA = frozenset({"is", "are"})
_NOT_A_MODIFIER = frozenset({"a", "an", "the", "being"})
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


def _same_order(a: list[str], b: list[str], *, moves: bool = False) -> bool:
    """Equal, or equal but for two neighbours swapped or two clauses trading places.

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
    return moves and _clauses_moved(a, b)


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
_REPORTING = frozenset({"said", "says", "say", "told"})
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


def meaning_difference(a: str, b: str, *, roles: bool = True) -> str | None:
    """Why two texts with (nearly) the same words may still say different things, or None.

    The one test every cheap NOOP passes (the router's Jaccard and cosine duplicates, recall's
    fold): a negation or a number differs (polarity_or_number_differs), the shared content
    words come in another order ("the turtle follows the fish" / "the fish follows the
    turtle"; an attribution moved, "..., Kaye said" / "Kaye said ...", is not another
    order: _attribution), or a preposition, particle, quantifier or pronoun differs ("into" /
    "out of", "on" / "off", "behind" / "in front of", "he helps her" / "she helps him").
    With `roles=False` only the negation and number tests apply: the router's restated long
    statement (route._restated), whose cosine already tells a rewording from another fact.
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
    if not _same_order(_role_order(a, shared), _role_order(b, shared), moves=moves):
        return "the shared words come in another order"
    if _conflict(particles_a, particles_b):
        return "a preposition or particle differs"
    if quantifiers_a != quantifiers_b:
        return "a quantifier differs"
    if _conflict(pronouns_a, pronouns_b):
        return "a pronoun differs"
    return None


def added_words(candidate: str, memory: str, *, paraphrase_aware: bool) -> frozenset[str]:
    """Content words of the candidate that a near-identical memory would lose if NOOPed.

    "User likes fishing on the lake and the ocean" against "User likes fishing on the lake"
    has Jaccard 0.8, yet a NOOP would drop "ocean"; in a long sentence one swapped word
    ("Lisbon" for "Porto") also stays above 0.8 and is a contradiction. By word overlap
    (`paraphrase_aware=False`) any new word counts. A cosine sees paraphrases, whose words
    differ by nature, so there (`paraphrase_aware=True`) only a strict extension counts:
    every word of the memory kept, something added.
    """
    new, old = content_tokens(candidate), content_tokens(memory)
    extra = new - old
    if paraphrase_aware and not old <= new:
        return frozenset()
    return extra


def verb_stem(word: str) -> str:
    """_stem, plus the third-person forms do-support undoes: has, goes, watches, studies."""
    if word in ("has", "goes"):
        return {"has": "have", "goes": "go"}[word]
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    return _stem(word)
