"""The context block: what fits a token budget, in what order, and how it reads.

render_context() takes the parts recall.context() gathered (the core, the short-term facts
relevant to the query, the hits) and keeps, part by part, the longest prefix that fits;
`prompts/recall.j2` renders them grouped by topic, newest first, each dated when the user
said it.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memman.lifecycle.shortterm import ShortTermFact
from memman.llm.prompts import render
from memman.models import Memory, SearchHit

# Tokens are approximated as characters / 4 (the usual figure for English with OpenAI
# tokenizers); a budget is a guard against flooding the prompt, not an exact count.
CHARS_PER_TOKEN = 4

RECALL_TEMPLATE = "recall.j2"


def approx_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


@dataclass(frozen=True)
class ContextBlock:
    """A rendered memory block for a system prompt, and what went into it."""

    text: str
    hits: list[SearchHit]
    approx_tokens: int
    short_term: list[ShortTermFact] = field(default_factory=list)  # the "right now" part
    core: list[Memory] = field(default_factory=list)  # shown whatever the query
    left_out: int = 0  # memories and short-term facts that did not fit max_tokens


def render_context(
    hits: list[SearchHit],
    *,
    max_tokens: int,
    prompts_dir: str | None,
    short_term: list[ShortTermFact],
    core: list[Memory],
    core_share: float,
    safety_first: bool = False,
) -> ContextBlock:
    """The core memories within core_share of max_tokens, then short-term facts and hits.

    A share too small for the core's first memory, a safety or constraint fact
    (`safety_first`), still shows it if the budget can: at max_tokens=100 the share held none,
    and "what should I cook?" got "User likes Thai food" without the peanut allergy.

    Short-term facts go before the hits: they are few, and about the conversation going on
    now. A hit the core already shows is not repeated. Each part is the longest prefix that
    fits, and what did not fit is counted in the block: a budget too small for any memory
    says so rather than claiming nothing is known.
    """

    offered = len(short_term) + len({m.id for m in core} | {h.id for h in hits})

    def core_tokens(n: int) -> int:
        return approx_tokens(_render(core[:n], [], [], 0, prompts_dir))

    def core_alone(n: int) -> int:  # the whole block, if nothing else fits
        return approx_tokens(_render(core[:n], [], [], offered - n, prompts_dir))

    shared = _longest_prefix(len(core), core_tokens, int(max_tokens * core_share))
    first = _longest_prefix(1, core_alone, max_tokens) if safety_first and core_share else 0
    shown_core = core[: max(shared, first)]
    shown = {m.id for m in shown_core}
    rest: list[ShortTermFact | SearchHit] = [
        *short_term,
        *(h for h in hits if h.id not in shown),
    ]

    @functools.cache
    def block(n: int) -> ContextBlock:
        current = [i for i in rest[:n] if isinstance(i, ShortTermFact)]
        chosen = [i for i in rest[:n] if isinstance(i, SearchHit)]
        left_out = offered - len(shown_core) - n
        text = _render(shown_core, current, chosen, left_out, prompts_dir)
        return ContextBlock(text, chosen, approx_tokens(text), current, shown_core, left_out)

    return block(_longest_prefix(len(rest), lambda n: block(n).approx_tokens, max_tokens))


def _longest_prefix(count: int, tokens: Callable[[int], int], budget: int) -> int:
    """The largest n <= count whose first n items render within budget (0 if none does).

    A block grows with every item, so bisection finds it: one render when everything fits
    (the usual case), about log2(count) otherwise.
    """
    if tokens(count) <= budget:
        return count
    fits, too_long = 0, count
    while too_long - fits > 1:
        middle = (fits + too_long) // 2
        if tokens(middle) <= budget:
            fits = middle
        else:
            too_long = middle
    return fits


def _render(
    core: list[Memory],
    short_term: list[ShortTermFact],
    hits: list[SearchHit],
    left_out: int,
    prompts_dir: str | None,
) -> str:
    right_now = [
        {"content": f.content, "until": f.expires_at[:16].replace("T", " ")} for f in short_term
    ]
    variables = {
        "right_now": right_now,
        "core": _groups(core),
        "memories": _groups([h.memory for h in hits]),
        "left_out": left_out,
    }
    return render(RECALL_TEMPLATE, variables, directory=prompts_dir).text


def _observed(memory: Memory) -> dt.datetime:
    """When the user said it; a memory from before topics were recorded has its last write."""
    return dt.datetime.fromisoformat(memory.observed_at or memory.updated_at)


def _topic(memory: Memory) -> tuple[str, ...]:
    if memory.attribute:
        return ("topic", memory.subject or "user", memory.attribute)
    if memory.category:
        return ("category", memory.category)
    return ("memory", memory.id)


def _label(topic: tuple[str, ...]) -> str:
    """'residence' for the user's own topic, "sister's job" for another's, or the category."""
    if topic[0] != "topic":
        return topic[1]
    subject, attribute = topic[1], topic[2].replace("_", " ")
    return attribute if subject == "user" else f"{subject}'s {attribute}"


def topic_label(memory: Memory) -> str | None:
    """The label of what a memory is about ("residence", "sister's job", a category), None
    when it has neither topic nor category: how the context block heads a group."""
    topic = _topic(memory)
    return None if topic[0] == "memory" else _label(topic)


def _groups(memories: list[Memory]) -> list[dict[str, Any]]:
    """Memories by topic, groups in the order of their best-ranked member, newest first inside.

    A group of one is a plain line; a larger one gets a label, so the model reads the newest
    statement about a topic first and the older ones as what it replaced or added to.
    """
    groups: dict[tuple[str, ...], list[Memory]] = {}
    for memory in memories:
        groups.setdefault(_topic(memory), []).append(memory)
    return [
        {
            "label": _label(topic) if len(members) > 1 else None,
            "facts": [
                {"content": m.content, "date": spoken_date(_observed(m))}
                for m in sorted(members, key=_observed, reverse=True)
            ],
        }
        for topic, members in groups.items()
    ]


MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


def spoken_date(moment: dt.datetime) -> str:
    """'3 May 2026', in UTC.

    Day-precise, so two statements of one month still read in order; the month spelled out,
    so 03/05 is never taken for 5 March; English names from this table, not strftime's %B,
    which follows the process locale.
    """
    moment = moment.astimezone(dt.UTC)
    return f"{moment.day} {MONTHS[moment.month - 1]} {moment.year}"
