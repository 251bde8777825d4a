"""Offline: what a user's chat message says about the user, and what is only talk to the bot.

Without an LLM, observe() stores the user's own words as candidate facts. Many messages are
not facts about the user at all: questions ("What's 17 * 23?"), requests ("Tell me a joke",
"Write a poem about my cat": the cat is the topic of a request, not something the user
stated) and chatter ("ok thanks!"). Stored, they would crowd recall and context blocks.

The rules are lexical and conservative, because a dropped fact is lost to memory while a
content-poor one only costs a row:
- a message is read sentence by sentence; a sentence is a statement unless a rule below
  recognises it as a question, a request or chatter;
- a question or request that states something about the user in passing ("How do I tell my
  boss I'm quitting?", "I moved to Munich last month, any tips?") counts as a statement:
  a first-person clause ("I'm", "I moved", "since I have") keeps it, unless it is the
  inverted subject of the question ("how do I", "should I") or a bare modal ("where I can
  buy"): those say nothing about the user;
- "remember that ...", "note that ...", "don't forget ..." are statements, whatever follows;
- a message with at least one statement is kept whole, verbatim. Its sentences refer to each
  other: cutting the question from "Do you think I should take the job in Berlin? I'd have to
  leave my family." would store "I'd have to leave my family.", which misleads; and a
  verbatim memory is exactly what its source message says.
Measured on evals/user_messages.jsonl by benchmarks/bench_utterance.py.
"""

from __future__ import annotations

import re
from typing import Literal

from memman.language.reader import READER

Why = Literal["chatter", "question to the assistant", "request to the assistant"]
CHATTER_WHY: Why = "chatter"
QUESTION: Why = "question to the assistant"
REQUEST: Why = "request to the assistant"

# Talk about the conversation itself: it names no fact ("I have a question" is followed by
# the question; "I need your help" by the request).
META = frozenset(
    tuple(phrase.split())
    for phrase in (
        "i have a question", "i have another question", "i have a quick question",
        "quick question", "question", "one more question", "one more thing", "never mind",
        "nevermind", "no worries", "i need your help",
        "that was helpful", "that helps", "that helped", "makes sense", "got it",
    )
)  # fmt: skip
# Words that open a sentence without changing what it is: "Hi, can you ...", "Please tell ..."
LEAD = frozenset(
    """hi hello hey ok okay so and also now well btw but actually oh alright please pls plz
    hmm um uh yes yeah no cool great thanks""".split()
)
# Verbs a user opens an instruction to the assistant with ("Tell me", "Summarise this").
# Verbs that also open a statement with its subject left out ("Love hiking", "Read it
# twice", "Played tennis") are not here: such a sentence stays a statement.
IMPERATIVES = frozenset(
    """write tell give summarise summarize translate explain list show make create generate
    draft compose describe suggest recommend help find calculate compute convert rewrite
    rephrase reword paraphrase correct proofread check define compare name remind search
    continue repeat analyse analyze pretend act teach quiz brainstorm outline edit
    improve shorten expand simplify format fix solve answer estimate pick choose sing spell
    review recite predict elaborate clarify plan
    """.split()
)
# "Name is Ayo.": a verb followed by one of these is a noun, the subject of a statement.
COPULAS = frozenset("is are was were".split())
# "Could you ...", "Would you mind ...": the assistant is asked to do something.
ASKING = frozenset("can could would will cant couldnt wont".split())
YOU = frozenset({"you", "u", "ya"})
WH = frozenset("what how why when where who whom which whose".split())
# Contracted wh-words are questions without a question mark: "what's the capital of x".
WH_CONTRACTED = frozenset("what's how's where's who's whats hows wheres whos".split())
AUXILIARIES = frozenset(
    """is are was were am do does did can could would will should shall may might must have
    has had isn't aren't wasn't weren't don't doesn't didn't can't couldn't wouldn't won't
    shouldn't haven't hasn't""".split()
)
# Words after "how" that ask a question: "how long should I boil an egg".
HOW_MUCH = frozenset("long many much far often old big tall come".split())
# Subjects of an inverted question: "is it safe ...", "do you ...", "can I ...". A sentence
# opening with an auxiliary and another word is often a statement without its subject
# ("Was at the gym all morning", "Had a great day"), so only these count without a "?".
PRONOUNS = frozenset("you u i it there this that we they he she anyone anybody someone".split())
# The user as the subject of a clause. "we" is left out: "remember what we talked about?"
# asks about the conversation.
FIRST_PERSON = frozenset("i i'm i've i'd i'll im ive".split())
# "where I can buy", "what I should do": a modal after "I" is hypothetical, not a fact.
MODALS = frozenset("can could should would will shall may might must".split())
# After these, "I" is the inverted subject of a question: "how do I", "should I".
INVERTING = AUXILIARIES | frozenset({"if", "whether"})
# "Remember that I'm vegan", "Don't forget my wife is Clara": always a statement.
DIRECTIVES = (
    ("remember", "that"), ("remember", "i"), ("remember", "i'm"), ("remember", "my"),
    ("note", "that"), ("note", "i"), ("note", "i'm"), ("note", "my"), ("keep", "in", "mind"),
    ("don't", "forget"), ("dont", "forget"), ("never", "forget"), ("fyi",),
    ("for", "the", "record"), ("just", "so", "you", "know"), ("for", "context"),
)  # fmt: skip
# "I want you to act as ...", "I'd like you to quiz me": a request phrased as a statement.
WANT_YOU = (
    ("i", "want", "you"), ("i'd", "like", "you"), ("i", "would", "like", "you"),
    ("i", "need", "you", "to"), ("i'd", "like", "to", "know"), ("i", "want", "to", "know"),
    ("i", "would", "like", "to", "know"), ("i", "was", "wondering", "if", "you"),
    ("i", "wonder", "if", "you"), ("i", "was", "wondering", "whether", "you"),
)  # fmt: skip

# The punctuation, symbols and emoji a sentence ends with: "Can you help? 🙏", "(why?)".
_TRAILING = re.compile(r"[\W_]*$")


def skip_reason(message: str) -> Why | None:
    """Why a user message states nothing about the user; None if it may (store it).

    Chatter only if every sentence is chatter: "Hi! Can you write a poem?" is a request.
    """
    whys = [_kind(sentence) for sentence in READER.sentences(message)]
    if None in whys:
        return None
    return next((why for why in whys if why != CHATTER_WHY), CHATTER_WHY)


def _kind(sentence: str) -> Why | None:
    """Why one sentence is not a statement about the user, or None if it may be one."""
    said = [w.replace("’", "'") for w in READER.written_words(sentence)]
    bare = [w.replace("'", "") for w in said]
    if READER.only_chatter(bare):
        return CHATTER_WHY  # also a sentence without words ("👍", "...")
    start = next((i for i, w in enumerate(bare) if w not in LEAD), len(bare))
    said, bare = said[start:], bare[start:]
    if tuple(bare) in META or not said:
        return CHATTER_WHY
    if _opens_with(said, DIRECTIVES):
        return None
    if _opens_with(said, WANT_YOU):
        return QUESTION if "know" in said[:5] else REQUEST
    why = _addressed(said, sentence)
    if why is not None and _states_about_user(said):
        return None
    return why


def _addressed(said: list[str], sentence: str) -> Why | None:
    """Request or question to the assistant by its form alone (None: not recognised)."""
    first, second = said[0], said[1] if len(said) > 1 else ""
    if (first in IMPERATIVES and second not in COPULAS) or first in ("let's", "lets"):
        return REQUEST
    if first in ASKING and second in YOU:
        return REQUEST
    ending = _TRAILING.search(sentence)
    if ending is not None and "?" in ending.group():
        return QUESTION
    if first in WH_CONTRACTED or (first in WH and (second in AUXILIARIES or second in PRONOUNS)):
        return QUESTION
    if first == "how" and second in HOW_MUCH:
        return QUESTION
    if first in AUXILIARIES and second in PRONOUNS:
        return QUESTION
    return None


def _states_about_user(said: list[str]) -> bool:
    """True if a clause has the user as its subject and states something ("since I'm ...").

    A sentence opening with "my" or "our" has the user's own as its subject ("My son has a
    peanut allergy, what snacks are safe?"): questions open with a wh-word or an auxiliary.
    """
    if said[0] in ("my", "our"):
        return True
    for index, word in enumerate(said):
        if word not in FIRST_PERSON:
            continue
        before = said[index - 1] if index else ""
        after = said[index + 1] if index + 1 < len(said) else ""
        if before in INVERTING or (word == "i" and after in MODALS):
            continue
        return True
    return False


def _opens_with(said: list[str], phrases: tuple[tuple[str, ...], ...]) -> bool:
    return any(tuple(said[: len(phrase)]) == phrase for phrase in phrases)
