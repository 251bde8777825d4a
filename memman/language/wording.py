"""How a fact is worded: its words without case, punctuation and fillers, whether one fact's
wording extends another's, and what a fact affirms once its negation is taken out.

The deciders' and merging's finer signals, built on memman/language/text.py's words and stems.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from memman.language import rulebook
from memman.language.roles import PARTICLES, PRONOUNS, QUANTIFIERS, meaning_difference
from memman.language.text import (
    _NUMBER_WORDS,
    _WORD,
    NEGATIONS,
    STOPWORDS,
    content_tokens,
    jaccard,
    negations,
    numbers,
    verb_stem,
    words,
)
from memman.memo import memoized

# The words: rules/wording.toml (fillers, intensifiers, negated auxiliaries, contractions).
FILLER = rulebook.words("wording", "words", "filler")
INTENSIFIERS = rulebook.words("wording", "words", "intensifiers")
_NEGATED_AUXILIARIES = rulebook.mapping("wording", "negated_auxiliaries")
_DO = rulebook.words("wording", "words", "do")
_CONTRACTIONS = {
    said: tuple(meant.split())
    for said, meant in rulebook.mapping("wording", "contractions").items()
}


@memoized
def wording(text: str) -> tuple[str, ...]:
    """The words of a fact in order, without case, punctuation, articles and fillers."""
    return tuple(w for _, w in _worded(text))


@memoized
def _worded(text: str) -> tuple[tuple[int, str], ...]:
    """wording's words with their positions in words(text)."""
    kept: list[tuple[int, str]] = []
    negated = False
    for position, w in enumerate(words(text)):
        negated = negated or w in NEGATIONS
        if w not in FILLER and (negated or w not in INTENSIFIERS):
            kept.append((position, w))
    return tuple(kept)


def extends(longer: str, shorter: str) -> bool:
    """The shorter fact's wording, in order and unbroken, inside the longer one's, and more.

    Same negations, no number of the shorter dropped. The offline decider updates a memory a
    candidate extends ("likes jazz" -> "likes jazz and blues"), and the router takes a
    candidate an active memory extends as said already. Sharing the words in another order or
    with others in between is not enough: on MSC persona facts that looser test let "I like
    reading suspense novels more than my job" replace "I like my job"
    (benchmarks/bench_hygiene.py). Nor is a run that a word right next to it turns into
    another thing: "has a dog allergy" is not "has a dog" (_opens_compound), "My brother likes
    jazz" is not "likes jazz" (_names_another).
    """
    # Cheap first, from what retrieval has derived already: every content word of the
    # shorter is in its wording (fillers and intensifiers are stopwords), so in the longer.
    # A number is one word however it is spelled: "I have two brothers and one sister" holds
    # "I have 2 brothers" (said again, that was a second row beside it offline).
    if not set(_spelled(content_tokens(shorter))) <= set(_spelled(content_tokens(longer))):
        return False
    old, new = _spelled(wording(shorter)), _spelled(wording(longer))
    if not (
        0 < len(old) < len(new)
        and old[0] in new
        and negations(shorter) == negations(longer)
        and numbers(shorter) <= numbers(longer)
    ):
        return False
    kept = _worded(longer)
    written = _cased_words(longer)
    # A fact without a subject opens with its verb ("Likes jazz", "Is vegan"): a word before
    # it names someone else ("My brother likes jazz"). Before a noun ("A white dog is chasing
    # cows") it describes that noun.
    first = words(shorter)[0]
    subject_free = first in _THIRD_PERSON_AUXILIARIES or (
        first not in STOPWORDS and first.endswith("s") and not first.endswith("ss")
    )
    for i in range(len(new) - len(old) + 1):
        if new[i : i + len(old)] == old:
            start, end = kept[i][0], kept[i + len(old) - 1][0]
            before = written[start - 1] if start > 0 else None
            after = written[end + 1] if end + 1 < len(written) else None
            named = subject_free and before is not None and _names_another(before)
            if not named and not (after and _opens_compound(after)):
                return True
    return False


def _spelled(words: Iterable[str]) -> tuple[str, ...]:
    """The words in order, each number word in digits ("two" -> "2")."""
    return tuple(_NUMBER_WORDS.get(w, w) for w in words)


# A long statement said again with a phrase added ("..., the company said Tuesday"): nearly
# the same words (the router's near-identical Jaccard), every content word of the shorter
# one kept in its role, and at least two words more. Measured (bench_pairs, offline): 25 MRPC
# paraphrases and 2 STS-B ones, and no pair of a distinct set that was not merged already; one
# added word is left out, as it is on SICK NEUTRAL's refinements ("a man plays a guitar" /
# "an electric guitar"), which both stay.
_ELABORATION_OVERLAP = 0.8
_ELABORATION_WORDS = 2


def elaborates(longer: str, shorter: str) -> bool:
    """The longer fact says all the shorter one says, in the same roles, and adds a phrase,
    with the words in between allowed ("Kaye said" / "Kaye said on Tuesday that"), which
    `extends` refuses: in a long statement (the overlap needs eight content words or more)
    the roles are kept by roles.meaning_difference (order, prepositions, negations, numbers),
    not by adjacency. Updating the shorter memory to it loses no word of either."""
    old, new = content_tokens(shorter), content_tokens(longer)
    return (
        old < new
        and len(new - old) >= _ELABORATION_WORDS
        and jaccard(old, new) >= _ELABORATION_OVERLAP
        and meaning_difference(longer, shorter) is None
    )


_THIRD_PERSON_AUXILIARIES = rulebook.words("wording", "words", "third_person_auxiliaries")


def _cased_words(text: str) -> list[str]:
    """words(text) as written, case kept; all lowercase when the text is written in capitals
    (then case tells nothing) or when casefolding changed how the text splits into words."""
    folded = words(text)
    cased = [
        w.replace("'", "").replace("’", "")
        for w in _WORD.findall(unicodedata.normalize("NFKC", text))
    ]
    if len(cased) != len(folded) or not any(c.islower() for c in text):
        return folded
    return cased


def _role_free(word: str) -> bool:
    w = word.casefold()
    return not (
        w in STOPWORDS or w in NEGATIONS or w in PARTICLES or w in QUANTIFIERS or w in PRONOUNS
    )


def _opens_compound(word: str) -> bool:
    """A word that, written right after a noun, makes it part of another thing.

    "has a dog allergy", "likes coffee ice cream": a lowercase noun. A capitalised name
    ("Lives in Berlin Kreuzberg"), a number ("Plays tennis twice a week"), an -ly adverb
    ("Speaks German fluently"), a participle ("Has a dog named Bruno") or a function word
    ("likes jazz and blues", "is playing a guitar") refines the fact instead.
    """
    w = word.casefold()
    return (
        _role_free(word)
        and w not in _NOT_NOUNS
        and not word[:1].isupper()
        and w not in _NUMBER_WORDS
        and not any(c.isdigit() for c in w)
        and not w.endswith(("ly", "ed"))
    )


_NOT_NOUNS = rulebook.words("wording", "words", "not_nouns")


def _names_another(word: str) -> bool:
    """A content word right before the run: it names another subject ("My brother likes
    jazz", "Anna likes jazz") or frames the statement ("She said I like jazz")."""
    return _role_free(word) and not word.casefold().endswith("ly")


@memoized
def affirmed(text: str) -> tuple[str, ...]:
    """The words without negation, fillers or intensifiers, stemmed: what is or is not so.

    "User does not like cilantro", "User doesn't like cilantro" and "User likes cilantro" all
    give (user, like, cilantro), "I'm not vegan" and "I am vegan" (i, am, vegan); "I am in
    Japan" and "I am not from Japan" do not match.
    """
    kept = []
    for word in words(text):
        for w in _CONTRACTIONS.get(word, (_NEGATED_AUXILIARIES.get(word, word),)):
            # Intensifiers go too, negated or not: "I am not very upset" takes back "I am very
            # upset" (wording keeps "very" after a negation, where it tells two facts apart).
            if w not in NEGATIONS and w not in _DO and w not in FILLER and w not in INTENSIFIERS:
                kept.append(verb_stem(w))
    return tuple(kept)
