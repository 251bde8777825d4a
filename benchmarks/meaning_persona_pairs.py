"""Would supersession by meaning (session 12, meaning13) end one of a persona's facts?

    python benchmarks/meaning_persona_pairs.py [--personas .../msc_personas_all.json]
        [--both-lead 0.1] [--filed-lead 0.05] [--examples 20]

An MSC persona's facts are all true at once, so every UPDATE the rule would make between two
facts of one persona is (nearly always) a false update. Each distinct fact of each persona
(train, valid and test; personas deduplicated) is taken in turn as the candidate, the
persona's other facts as the memories around it (filed by the reader as the write path files
them), and the rule is asked; a candidate it settles counts once. Prints the rate per
candidate, per ordered pair and per persona, and seeded examples. Needs the local embedder.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import time
from collections import Counter
from pathlib import Path

import numpy as np

from memman.config import load_settings
from memman.language.attributes import USER
from memman.language.change import says_change
from memman.language.topic import Topic, about
from memman.semantic.embed import make_embedder
from memman.write.meaning import Prototypes, prototypes

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("MEMMAN_DATA", ROOT.parent / "shared" / "data"))
PERSONAS = DATA / "msc" / "msc_personas_all.json"


def personas(path: Path) -> list[tuple[str, ...]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    found = {
        tuple(dict.fromkeys(facts))
        for split in data.values()
        for dialogue in split
        for name, facts in dialogue.items()
        if name.startswith("Speaker")
    }
    return sorted(found)


def named(found: Prototypes, scores: np.ndarray, lead: float) -> str | None:
    """The attribute whose prototype scores best, when it leads the second by `lead`."""
    second, best = np.argsort(scores)[-2:]
    if scores[best] < found.floor or scores[best] - scores[second] < lead:
        return None
    return found.attributes[int(best)]


def replaced(
    fact: tuple[str, Topic | None, np.ndarray],
    memories: list[tuple[str, Topic | None, np.ndarray]],
    found: Prototypes,
    single: frozenset[str],
    leads: tuple[float, float],
) -> tuple[str, str] | None:
    """(attribute, memory text) the rule would replace with the fact; None: it adds it."""
    text, topic, vector = fact
    both, loose_lead = leads
    if (topic is not None and topic.subject != USER) or not says_change(text):
        return None
    filed = topic.attribute if topic is not None and topic.attribute in single else None
    scores = found.matrix @ vector
    near, loose = named(found, scores, both), named(found, scores, loose_lead)
    holders: dict[str, list[tuple[str, bool]]] = {}
    for memory, its_topic, its_vector in memories:
        if its_topic is not None and its_topic.subject != USER:
            continue
        row = found.matrix @ its_vector
        m_near, m_loose = named(found, row, both), named(found, row, loose_lead)
        m_filed = its_topic.attribute if its_topic and its_topic.attribute in single else None
        for attribute in {m_loose, m_filed} - {None}:
            pairs = (
                (near == attribute == m_near)
                or (filed == attribute == m_loose and m_filed != attribute)
                or (m_filed == attribute == loose and filed != attribute)
            )
            holders.setdefault(attribute, []).append((memory, bool(pairs)))
    settled = [
        (attribute, held[0][0])
        for attribute, held in holders.items()
        if attribute in single and len(held) == 1 and held[0][1]
    ]
    return settled[0] if len(settled) == 1 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--personas", type=Path, default=PERSONAS)
    parser.add_argument("--both-lead", type=float, default=None, help="default: calibrated")
    parser.add_argument("--filed-lead", type=float, default=0.05)
    parser.add_argument("--examples", type=int, default=20)
    args = parser.parse_args()
    settings = load_settings(embedder="local", decider="offline")
    embedder = make_embedder(settings)
    assert embedder is not None
    found = prototypes(embedder.name)
    assert found is not None
    leads = (found.margin if args.both_lead is None else args.both_lead, args.filed_lead)
    single = frozenset(settings.single_valued_attributes)
    started = time.perf_counter()
    people = personas(args.personas)
    texts = sorted({fact for person in people for fact in person})
    vectors = dict(zip(texts, embedder.embed(texts), strict=True))
    facts = {text: (text, about(text), vectors[text]) for text in texts}
    candidates = pairs = 0
    fired: list[tuple[str, str, str]] = []
    cues: Counter[str] = Counter()
    hit_people = 0
    for person in people:
        hit = False
        for text in person:
            if len(person) < 2:
                continue
            candidates += 1
            pairs += len(person) - 1
            others = [facts[t] for t in person if t != text]
            settled = replaced(facts[text], others, found, single, leads)
            if settled is not None:
                fired.append((*settled[:1], text, settled[1]))
                # The single words that are a cue on their own ("used to" is two: missed).
                cues.update(w.lower() for w in re.findall(r"[\w']+", text) if says_change(w))
                hit = True
        hit_people += hit
    seconds = time.perf_counter() - started
    print(
        f"leads both={leads[0]} filed={leads[1]}: "
        f"{len(people)} personas, {candidates} candidates, {pairs} ordered pairs, "
        f"{len(fired)} UPDATEs ({len(fired) / candidates:.4%} of candidates, "
        f"{len(fired) / pairs:.4%} of pairs, {hit_people / len(people):.2%} of personas) "
        f"in {seconds:.0f} s"
    )
    print("change cues of the facts it settled:", cues.most_common(15))
    random.Random(1).shuffle(fired)
    for attribute, text, target in fired[: args.examples]:
        print(f"  {attribute:20} {text!r}  ends  {target!r}")


if __name__ == "__main__":
    main()
