"""The context block: what fits a token budget, in what order, and how it reads.

render_context() takes the parts recall.context() gathered (the core, the short-term facts
relevant to the query, the hits), puts related memories together, newest first, and keeps,
part by part, the longest prefix that fits; `prompts/recall.j2` renders each group as its
newest statement with the older ones under it marked "earlier", every memory dated when the
user said it.

Offline, memman cannot always tell that "we moved to York" replaced "User lives in Leeds":
both stay active. The block then still tells the truth by its shape: the newer statement
first, the older one marked as said earlier, whichever of the two the search ranked higher.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memman.language.reader import READER
from memman.lifecycle.shortterm import ShortTermFact
from memman.llm.prompts import render
from memman.models import Memory, SearchHit

# Tokens are approximated as characters / 4 (the usual figure for English with OpenAI
# tokenizers); a budget is a guard against flooding the prompt, not an exact count.
CHARS_PER_TOKEN = 4

RECALL_TEMPLATE = "recall.j2"

# Two memories of one subject whose topics differ (or neither has one) are related when they
# share at least a third of their content words: "I own a motorcycle" / "I sold my
# motorcycle" ({motorcycl, own} | {sold, motorcycl}), "User lives in Leeds" / "User lives in
# York". Of conflicts.jsonl's supersede pairs the reader labels apart, 9 of 15 reach it, and 3
# of 22 keep_both pairs ("I have a dog" / "I have a dog allergy"), which "earlier" does not
# wrong: it says when, not that the older is false. A memory missed is still shown, dated.
RELATED_JACCARD = 1 / 3

Group = list[Memory]  # related memories, newest first


def approx_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


@dataclass(frozen=True)
class ContextBlock:
    """A rendered memory block for a system prompt, and what went into it."""

    text: str
    hits: list[SearchHit]  # the hits shown, best first (the text groups related ones)
    approx_tokens: int
    short_term: list[ShortTermFact] = field(default_factory=list)  # the "right now" part
    core: list[Memory] = field(default_factory=list)  # shown whatever the query
    left_out: int = 0  # memories and short-term facts that did not fit max_tokens

    def __str__(self) -> str:
        """The text, so f"{mm.context(q)}" puts the block in a prompt, not this record."""
        return self.text


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
    (`safety_first`), still shows it (and any newer related memory, shown above it) if the
    budget can: at max_tokens=100 the share held none, and "what should I cook?" got "User
    likes Thai food" without the peanut allergy.

    Short-term facts go before the hits: they are few, and about the conversation going on
    now. A hit the core already shows is not repeated. Each part is the longest prefix, in
    the order shown (related memories together, newest first), that fits: so the newer
    statement of a topic is never cut while an older one is kept. What did not fit is counted
    in the block: a budget too small for any memory says so rather than claiming nothing is
    known.
    """

    offered = len(short_term) + len({m.id for m in core} | {h.id for h in hits})
    core_groups = _related_groups(core)
    in_order = [m for group in core_groups for m in group]

    def core_text(n: int, left_out: int) -> str:
        shown = {m.id for m in in_order[:n]}
        return _render(_only(core_groups, shown), [], [], left_out, prompts_dir)

    def core_tokens(n: int) -> int:
        return approx_tokens(core_text(n, 0))

    def core_alone(n: int) -> int:  # the whole block, if nothing else fits
        return approx_tokens(core_text(n, offered - n))

    shared = _longest_prefix(len(in_order), core_tokens, int(max_tokens * core_share))
    first = 0
    if safety_first and core_share:  # core[0], and the newer statements shown before it
        through = in_order.index(core[0]) + 1
        first = through if core_alone(through) <= max_tokens else 0
    shown = {m.id for m in in_order[: max(shared, first)]}
    shown_core = [m for m in core if m.id in shown]
    shown_groups = _only(core_groups, shown)
    rest_hits = [h for h in hits if h.id not in shown]
    hit_groups = _related_groups([h.memory for h in rest_hits])
    rest: list[ShortTermFact | str] = [*short_term, *(m.id for g in hit_groups for m in g)]

    @functools.cache
    def block(n: int) -> ContextBlock:
        current = [i for i in rest[:n] if isinstance(i, ShortTermFact)]
        ids = {i for i in rest[:n] if isinstance(i, str)}
        chosen = [h for h in rest_hits if h.id in ids]
        left_out = offered - len(shown_core) - n
        text = _render(shown_groups, current, _only(hit_groups, ids), left_out, prompts_dir)
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
    core: list[Group],
    short_term: list[ShortTermFact],
    hits: list[Group],
    left_out: int,
    prompts_dir: str | None,
) -> str:
    right_now = [
        {"content": f.content, "until": f.expires_at[:16].replace("T", " ")} for f in short_term
    ]
    variables = {
        "right_now": right_now,
        "core": [_lines(group) for group in core],
        "memories": [_lines(group) for group in hits],
        "left_out": left_out,
    }
    return render(RECALL_TEMPLATE, variables, directory=prompts_dir).text


def _lines(group: Group) -> dict[str, Any]:
    """A group as the template reads it: its newest statements, then what was said earlier.

    Statements of the group's latest moment (an import, one message read as several facts)
    are all newest: none was said before another, so none is marked earlier.
    """
    latest = _observed(group[0])
    newest = [_fact(m) for m in group if _observed(m) == latest]
    return {"newest": newest, "earlier": [_fact(m) for m in group if _observed(m) < latest]}


def _fact(memory: Memory) -> dict[str, str]:
    return {"content": memory.content, "date": spoken_date(_observed(memory))}


def _observed(memory: Memory) -> dt.datetime:
    """When the user said it; a memory from before topics were recorded has its last write."""
    return dt.datetime.fromisoformat(memory.observed_at or memory.updated_at)


def _topic(memory: Memory) -> tuple[str, str] | None:
    """(subject, attribute), the subject "user" when only the attribute is known."""
    return (memory.subject or "user", memory.attribute) if memory.attribute else None


def topic_label(memory: Memory) -> str | None:
    """What a memory is about, as a person reads it: "residence", "sister's job", else its
    category; None when it has neither (how the inspector page heads a group)."""
    topic = _topic(memory)
    if topic is None or topic[1].startswith("verb:"):  # a verb's fallback names nothing
        return memory.category
    subject, attribute = topic[0], topic[1].replace("_", " ")
    return attribute if subject == "user" else f"{subject}'s {attribute}"


def _related_groups(memories: list[Memory]) -> list[Group]:
    """Related memories together, newest first; groups in the order of their best-ranked member.

    Related: of one topic (subject and attribute), or of one subject and sharing
    RELATED_JACCARD of their content words, as "I own a motorcycle" (verb:own) and "I sold my
    motorcycle" (verb:quit), which the reader labels apart. Two memories without a label are
    taken as of one subject; a labelled and an unlabelled one never are, the reader knowing
    only one's subject ("My sister rides a bike in Paris" is not her residence). A memory joins
    the group of the first better-ranked memory it is related to.
    """
    groups: list[Group] = []
    by_topic: dict[tuple[str, str], Group] = {}
    seen: list[tuple[str | None, frozenset[str], Group]] = []  # subject, content words, group
    for memory in memories:
        topic = _topic(memory)
        subject = topic[0] if topic else None
        words = READER.content_tokens(memory.content)
        group = by_topic.get(topic) if topic else None
        if group is None:
            close = (g for s, w, g in seen if s == subject and words & w and _close(words, w))
            group = next(close, None)
        if group is None:
            group = []
            groups.append(group)
        if topic:
            by_topic.setdefault(topic, group)
        seen.append((subject, words, group))
        group.append(memory)
    return [sorted(group, key=_observed, reverse=True) for group in groups]


def _close(a: frozenset[str], b: frozenset[str]) -> bool:
    return READER.jaccard(a, b) >= RELATED_JACCARD


def _only(groups: list[Group], ids: set[str]) -> list[Group]:
    """The groups cut to the memories shown, in the same order; a group with none left goes."""
    return [kept for group in groups if (kept := [m for m in group if m.id in ids])]


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
