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


# One negation, spelled three ways: "don't like" is "do not like" (the auxiliary is a stopword
# either way), and "has no car" is "does not have a car". Read as "not" so that a spelling
# alone is no negation difference (bench_pairs: MRPC's "protections do not / don't apply",
# "does not have / has no state death penalty"). Only the contractions of do, be and have: a
# modal's ("can't", "won't", "couldn't") says what "not" does not ("I can't cook" is not "I do
# not cook", an MSC pair in bench_calls' replay), and "never", "none", "nobody", "nothing",
# "without" and the verbs ("stopped", "hates") say more than "not". All keep their own names.
_SAID_NOT = frozenset(
    "no dont doesnt didnt isnt arent wasnt werent hasnt havent hadnt aint".split()
)


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
    if word in ("has", "goes"):
        return {"has": "have", "goes": "go"}[word]
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    return _stem(word)
