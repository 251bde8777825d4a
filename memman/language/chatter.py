"""The chatter around a chat message's statement: greetings, acknowledgements, lead words.

"Hi! I'm Tom." and "By the way I'm lactose intolerant." state a name and an intolerance; the
"Hi!" and the "By the way" say nothing. The topic extractor reads past them (past_chatter,
and speaker.without_openers for the lead phrases), and offline observe tells a message of
nothing but chatter ("ok thanks!") from a statement (lifecycle/utterance.py) with the same
words.
"""

from __future__ import annotations

import re

from memman.language import rulebook
from memman.language.text import written_words

# The words and the tail pattern: rules/chatter.toml.
CHATTER = rulebook.words("chatter", "words", "chatter")
_TAIL = rulebook.pattern("chatter", "tail")
# A sentence ends at . ! ? or … followed by a space, or at a line break ("3.5" stays whole).
SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\s*\n\s*")


def sentences(text: str) -> list[str]:
    """The sentences of a message, in order (see SENTENCE_END)."""
    return [sentence for sentence in SENTENCE_END.split(text.strip()) if sentence]


def is_chatter(sentence: str) -> bool:
    """True if every word of the sentence is chatter ("Hi!", "Thanks so much!", "👍")."""
    return {w.replace("’", "'").replace("'", "") for w in written_words(sentence)} <= CHATTER


def past_chatter(text: str) -> str:
    """The message from its first sentence that is not chatter, without lead words said
    last: "Hi! I'm Tom." -> "I'm Tom.", "I have a cat btw" -> "I have a cat"; a message of
    nothing but chatter is returned whole."""
    said = sentences(text)
    start = next((i for i, sentence in enumerate(said) if not is_chatter(sentence)), 0)
    text = " ".join(said[start:]) if start else text
    return _TAIL.sub("", text) or text
