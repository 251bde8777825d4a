"""Text normalisation and the cheap lexical signals the router relies on.

Everything here is pure and deterministic: the hash tier, the FTS query builder and the
lexical router all see a fact through these functions, so they agree on what a "word" is.
How a fact is worded (fillers, extensions, what it affirms) is memman/language/wording.py;
whether two texts with the same words say the same thing is memman/language/roles.py.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from memman.language import rulebook
from memman.memo import memoized

_WHITESPACE = re.compile(r"\s+")
_TRAILING_PUNCT = re.compile(r"[\s\.\!\?\,\;\:…。！？、]+$")
# A word is a run of letters/digits, apostrophes inside it kept as written ("o'neill"). words()
# then drops them ("don't" -> "dont", as NEGATIONS spells it); FTS5 instead splits there ("o",
# "neill"), which is why the query builder and merge blocking start from the written form.
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")

# The words: rules/text.toml (function words, negations, numbers said in words).
STOPWORDS = rulebook.words("text", "words", "stopwords")
NEGATIONS = rulebook.words("text", "words", "negations")
_NUMBER_WORDS = rulebook.mapping("text", "map.number_words")
_THIRD_PERSON = rulebook.mapping("text", "map.irregular_third_person")


# Letters that render as nothing (Hangul fillers, the Braille blank): a text of these alone
# shows as empty, as one of format characters (zero-width space, BOM, soft hyphen) does.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def blank(text: str) -> bool:
    """Whether text shows nothing: only whitespace, control and format characters (zero-width
    space U+200B, BOM U+FEFF, invisible separator U+2063, soft hyphen U+00AD ...) and letters
    that render as nothing. Such a "fact" is refused as an empty one is."""
    return all(
        c.isspace() or c in _BLANK_LETTERS or unicodedata.category(c) in ("Cc", "Cf", "Zs")
        for c in text
    )


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


# One negation, spelled three ways ("don't like" is "do not like"): rules/text.toml's said_not.
_SAID_NOT = rulebook.words("text", "words", "said_not")


@memoized
def negations(text: str) -> frozenset[str]:
    """The negations a text says, "not" for each spelling of it (_SAID_NOT)."""
    return frozenset("not" if w in _SAID_NOT else w for w in _words(text) if w in NEGATIONS)


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
    if word in _THIRD_PERSON:
        return _THIRD_PERSON[word]
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    return _stem(word)
