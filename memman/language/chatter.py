"""The chatter around a chat message's statement: greetings, acknowledgements, lead words.

"Hi! I'm Tom." and "By the way I'm lactose intolerant." state a name and an intolerance; the
"Hi!" and the "By the way" say nothing. The topic extractor reads past them (past_chatter,
and speaker.without_openers for the lead phrases), and offline observe tells a message of
nothing but chatter ("ok thanks!") from a statement (lifecycle/utterance.py) with the same
words.
"""

from __future__ import annotations

import re

from memman.language.text import written_words

# Every word of a chatter sentence is one of these: acknowledgements, greetings and the few
# words that glue them ("thank you so much", "ok sounds good to me"). Words about the user
# ("I", "my", "am") are not here, so "I am sure of myself" and "I don't see him" are kept:
# storing a content-poor fact is better than dropping one.
CHATTER = frozenset(
    """ok okay k kk hmm hm mm uh um ah oh wow yes yeah yep yup no nope not sure fine cool great
    nice good lol haha thanks thank thx ty please hi hello hey bye goodbye morning evening
    night alright right awesome perfect sounds welcome you your youre so much very really a
    lot too for now then that thats it its is and all to me got see there""".split()
)
# Lead words said last: "I have a peanut allergy btw", "I'm vegan, just so you know." In
# small letters (or "BTW"): "I like the song By the Way." names a song.
_TAIL = re.compile(
    r"[\s,;:-]*\b(?:btw|BTW|Btw|by the way|fyi|FYI|lol|LOL|haha|just so you know"
    r"|for the record)\W*$"
)
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
