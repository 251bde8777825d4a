"""Memory hygiene over simulated multi-session chats: store size, duplicates, stale facts.

    python benchmarks/bench_hygiene.py [--users 500] [--sessions 4] [--seed 1] [--embedder local]

Each user is one MSC persona (a speaker's facts in the train split, first person: "I like
Metallica."). Session 1: the user states every persona fact, one message each, between
assistant replies and chatter ("ok thanks!"). Later sessions: the user restates about 40 % of
the facts with the surface edits people make when repeating themselves (an added "really", a
lost or added full stop, "Also, ", capitals) plus chatter; in the last session the user also
takes back about 10 % of the facts that have a simple verb ("I am vegan." -> "I'm not
vegan.", "I like X" -> "I don't like X" / "I no longer like X"). Everything goes through
mm.observe + mm.flush with no LLM configured (offline extraction: the user's messages
verbatim), then one mm.consolidate().

Compared with two baselines computed on the same messages: an append-only store (every user
message is a memory, as a naive module keeps them) and append-only with an exact-text check
(normalised content hash, what the cheapest dedup catches).

Reported: memories kept, against the personas' own facts (the ideal store) and how many of
those (or their take-back) no active memory says in the same wording (lost); memories with
the same wording as another active memory of the user (memman.language.wording.wording), i.e.
duplicates a prompt would show twice; taken-back facts whose old statement is still active
in any restated form, and context() blocks (queried with the new statement) that show both
the old and the new one; chatter stored; user messages per second through observe + flush.

What this does and does not show: the restatements and take-backs are synthetic edits of the
kinds the deterministic tiers are built for, so this checks the offline pipeline end to end
at scale, not how often real paraphrases are caught (see the STS-B/MRPC figures in
RESULTS.md for that, and `memman eval` for decisions on hand-written cases).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
import time
from collections import Counter
from pathlib import Path

from calibrate_lexical import DATA

from memman import MemoryManager
from memman.language.text import content_hash, negations
from memman.language.wording import wording

RESTATEMENTS = [
    lambda t: t.replace("I ", "I really ", 1),
    lambda t: t.rstrip(".") if t.endswith(".") else t + ".",
    lambda t: "Also, " + t,
    lambda t: t.upper(),
]
CHATTER = ["ok thanks!", "hmm", "haha nice", "hi!", "sounds good", "yes", "bye for now"]
REPLIES = ["Good to know!", "Thanks for telling me.", "Noted.", "That sounds fun!"]
# Verbs whose statement takes a plain negation; "hate" is left out (it is a negation itself).
_NEGATABLE = re.compile(r"^I (am|like|love|enjoy|have|play|own|live|work|go|watch|drive) ")


def negate(fact: str, rng: random.Random) -> str | None:
    """The take-back of a plain positive statement ("I have never worked" has none).

    Written out or contracted at random, as people do: "I am not" / "I'm not", "I do not" /
    "I don't" / "I no longer".
    """
    found = _NEGATABLE.match(fact)
    if found is None or negations(fact):
        return None
    verb, rest = found.group(1), fact[found.end() :]
    if verb == "am":
        return rng.choice(["I am not ", "I'm not "]) + rest
    return rng.choice(["I do not {} ", "I don't {} ", "I no longer {} "]).format(verb) + rest


def personas(count: int) -> list[list[str]]:
    data = json.loads((DATA / "msc" / "msc_personas_all.json").read_text(encoding="utf-8"))
    speakers = [
        list(dict.fromkeys(facts))
        for dialogue in data["train"]
        for name, facts in dialogue.items()
        if name.startswith("Speaker") and len(facts) >= 4
    ]
    return speakers[:count]


def conversation(facts: list[str], sessions: int, rng: random.Random) -> tuple[list, dict]:
    """(messages per session, {old fact: its take-back}) for one persona."""

    def turn(text: str) -> list[dict[str, str]]:
        return [
            {"role": "user", "content": text},
            {"role": "assistant", "content": rng.choice(REPLIES)},
        ]

    def chatter() -> list[dict[str, str]]:
        return [{"role": "user", "content": rng.choice(CHATTER)}]

    talks: list[list[dict[str, str]]] = [[m for f in facts for m in turn(f)] + chatter()]
    taken_back: dict[str, str] = {}
    for index in range(1, sessions):
        talk = chatter()
        for fact in rng.sample(facts, max(1, int(len(facts) * 0.4))):
            talk += turn(rng.choice(RESTATEMENTS)(fact))
        if index == sessions - 1:
            for fact in facts:
                negated = negate(fact, rng)
                if negated and rng.random() < 0.1:
                    taken_back[fact] = negated
                    talk += turn(negated)
        talks.append(talk + chatter())
    return talks, taken_back


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=500)
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--embedder", default="none", help="none or local (needs memman[local])")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    facts = {f"user{i}": persona for i, persona in enumerate(personas(args.users))}
    users = {user: conversation(persona, args.sessions, rng) for user, persona in facts.items()}

    user_messages = [
        (user, m["content"])
        for user, (talks, _) in users.items()
        for talk in talks
        for m in talk
        if m["role"] == "user"
    ]
    said = [content for _, content in user_messages]
    hashed = {(user, content_hash(content)) for user, content in user_messages}
    with (
        tempfile.TemporaryDirectory() as tmp,
        MemoryManager(str(Path(tmp) / "h.db"), embedder=args.embedder) as mm,
    ):
        started = time.perf_counter()
        for user, (talks, _) in users.items():
            for number, talk in enumerate(talks):
                mm.observe(talk, user_id=user, session_id=f"{user}/{number}")
                mm.flush(f"{user}/{number}", user_id=user)
        elapsed = time.perf_counter() - started
        after_flush = sum(len(mm.list(user_id=user)) for user in users)
        report = mm.consolidate(max_ops=1_000_000)
        kept = {user: mm.list(user_id=user) for user in users}
        stale = both_shown = lost = 0
        for user, (_, taken_back) in users.items():
            worded = {wording(m.content) for m in kept[user]}
            lost += sum(wording(taken_back.get(f, f)) not in worded for f in facts[user])
            for old, new in taken_back.items():
                stale += wording(old) in worded  # the old statement, in any restated form
                block = mm.context(new, user_id=user).text
                both_shown += old in block and new in block
        chatter_stored = sum(m.content in CHATTER for memories in kept.values() for m in memories)
        twins = sum(
            count - 1
            for memories in kept.values()
            for count in Counter(wording(m.content) for m in memories).values()
            if count > 1
        )

    take_backs = sum(len(t) for _, t in users.values())
    memories = sum(len(m) for m in kept.values())
    print(f"{len(users)} users, {args.sessions} sessions each, embedder {args.embedder}, "
          f"{len(said):,} user messages, "
          f"{take_backs} facts taken back")  # fmt: skip
    print(f"append-only store:            {len(said):,} memories")
    print(f"append-only + exact-text check: {len(hashed):,} memories")
    print(f"memman after observe/flush:   {after_flush:,} memories")
    share = memories / len(said)
    print(f"memman after consolidate:     {memories:,} memories "
          f"({len(report.changes)} changes; {share:.1%} of append-only)")  # fmt: skip
    print(f"persona facts (the ideal store): {sum(len(f) for f in facts.values()):,}; "
          f"of them with no active memory of the same wording (lost): {lost}")  # fmt: skip
    print(f"same wording as another active memory: {twins}")
    print(f"taken-back facts still active: {stale} of {take_backs}; "
          f"context blocks showing both old and new: {both_shown}")  # fmt: skip
    print(f"chatter stored: {chatter_stored} (offline: no LLM configured, no call made)")
    print(f"observe + flush: {len(said) / elapsed:,.0f} user messages/s ({elapsed:.1f} s)")


if __name__ == "__main__":
    main()
