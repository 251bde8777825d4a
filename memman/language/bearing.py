"""The words of a fact that say what it is about, as opposed to how the speaker relates to it.

"I like to play basketball" and "I like to read books" share "like", and that word alone made
them look related (Jaccard 0.2 >= novel_jaccard): in a long chat nearly every new fact shares
"like", "love", "have" or "want" with some memory, so the lexical router asked the LLM about
70 % of the facts of benchmarks/bench_calls.py's replay (RESULTS.md, "Conversation replay: LLM
calls per fact"). Such words relate the speaker to a thing (likes it, wants it, has it, goes
to it) without naming the thing; the thing ("basketball", "dog", "Berlin") is what two facts
must share to be about the same. A closed class, not a frequency cut: words held by many of a
scope's memories include "dog", "school" and "music" (2-4 % of the replay's memories each),
which do name a topic.
"""

from __future__ import annotations

from memman.language.text import content_tokens
from memman.language.verbs import SHARED_OBJECT_WORDS
from memman.memo import memoized

# Verbs of liking, wanting, having, getting and going, with their inflections as written
# (content_tokens stems only a plural or third-person "s"), and "favorite": each takes the
# thing as its object ("my favorite color", "want to be an author").
_RELATION = content_tokens(
    """like likes liked love loves loved enjoy enjoys enjoyed prefer prefers preferred adore
    adores want wants wanted wish wishes hope hopes need needs needed have has own owns get
    gets got take takes took make makes made used would favorite favourite try tries tried
    plan plans start starts keep keeps feel feels think thinks know knows go goes going went"""
)

RELATION_WORDS = _RELATION | SHARED_OBJECT_WORDS


@memoized
def bearing_words(text: str) -> frozenset[str]:
    """The fact's content words (text.content_tokens) less the relation words: its topic."""
    return content_tokens(text) - RELATION_WORDS
