"""The fallback topic of a fact no pattern reads: its verb and the verb's whole object.

"I collect antique dolls" is (verb:collect, "antique dolls"): too coarse to settle anything
alone, yet enough to tell a fact from another person's facts and to bring the memories of
the same verb to the decider.
"""

from __future__ import annotations

from memman.language import rulebook
from memman.language.attributes import USER, VERB
from memman.language.negation import GERUNDS
from memman.language.text import STOPWORDS, content_tokens

SHARED_OBJECT_WORDS = rulebook.words("verbs", "words", "shared_object_words")
_MODALS = rulebook.words("verbs", "words", "modals")


def verb_and_object(predicate: str, subject: str) -> tuple[str, str | None, bool] | None:
    """The fallback for facts no pattern reads: "verb:<verb>" and the verb's whole object.

    "I collect antique dolls" is (verb:collect, "antique dolls"). It settles nothing: the
    memories of the same verb reach the decider, whatever their objects ("supports Arsenal" /
    "supports Chelsea now"), and it tells a fact apart only from another person's facts and
    from recognised attributes of the same person (see supersede._other_topic).
    """
    verb, _, rest = predicate.partition(" ")
    if verb == "am" and rest.split(" ", 1)[0].endswith("ing"):  # "am learning German"
        verb, _, rest = rest.partition(" ")
    if verb.endswith("ing") and len(verb) > 5:
        verb = GERUNDS.get(verb, verb[:-3])
    if verb in _MODALS and rest:  # "would like to be an artist": verb:would_like
        second, _, rest = rest.partition(" ")
        verb = f"{verb}_{second}"
    elif rest.startswith("to "):  # "want to open a store": verb:want, "open a store"
        rest = rest[3:]
    if not verb.replace("_", "").isalpha() or verb in STOPWORDS - {"am", "have", "own"}:
        return None
    if subject == USER and not rest:
        return None
    return f"{VERB}:{'be' if verb == 'am' else verb}", rest or None, False


def object_words(value: str) -> frozenset[str]:
    """The content words of a verb topic's object that tell one thing from another: not
    numbers or words like "named" that any two objects may share ("a dog named George" and "a
    cat named Matter")."""
    return frozenset(
        w for w in content_tokens(value) if w not in SHARED_OBJECT_WORDS and not w.isdigit()
    )


_PAST = rulebook.words("changes", "past", "verbs")


def is_past(verb: str) -> bool:
    """The verb tells an event, not a state: "visited Paris in 2019" and "in 2022" are two
    events, not a recount (rules/changes.toml [past], and any verb ending in "ed")."""
    return verb in _PAST or verb.endswith("ed")
