"""Attribute prototypes for an embedder: what "about residence", "about the car" ... looks like.

    python benchmarks/calibrate_attributes.py [--personas .../msc_personas_all.json]
        [--per-attribute 300] [--precision 0.9] [--seed 7]

The deterministic extractor (memman.language.topic.about) labels the distinct MSC persona facts; for
each recognised attribute of the user with at least 40 facts, up to `--per-attribute` of them
are embedded (local MiniLM). 70 % make the attribute's prototype (the mean vector, unit
length), 30 % are held out. On the held-out facts, each fact's nearest prototype is its
predicted attribute, kept when it leads the second nearest by a margin. MiniLM's cosines to a
prototype do not separate facts about an attribute from facts about none (measured: at the
cosine where 5 % of verb-topic facts get an attribute, 57 % of the labelled ones get none),
the lead over the second prototype does better. The facts it is meant for are those the
extractor gives only a verb topic ("I bought a Tesla"); 1,000 of them (seeded) measure how
often such a fact is given an attribute ("stray": some rightly, "bought a new car" is about
the car). The margin written is the lowest at which the held-out predictions are right at
least `--precision` of the time. Writes memman/data/attribute_prototypes.npz (read
by memman.write.meaning) and prints precision and coverage per threshold.

The prototypes only widen the candidates a fact is compared with (the memories of the
attribute it is nearest to reach the decider); they never settle anything, so a wrong match
costs a longer prompt, not a fact.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from topic_changes import persona_facts

from memman.config import load_settings
from memman.language.attributes import USER, is_verb_topic
from memman.language.topic import about
from memman.semantic.embed import make_embedder, unit_rows

ROOT = Path(__file__).resolve().parents[1]
PERSONAS = Path("/work/shared/data/msc/msc_personas_all.json")
OUT = ROOT / "memman" / "data" / "attribute_prototypes.npz"
MIN_FACTS = 40
GRID = [round(0.02 * i, 2) for i in range(16)]  # margins 0.00 .. 0.30
FLOOR = 0.3  # below this cosine to every prototype a fact is about none of them


def labelled_facts(path: Path) -> tuple[dict[str, list[str]], list[str]]:
    """The user's facts per recognised attribute, and the user's facts with only a verb topic.
    Amounts, take-backs and "likes" (the catch-all every "I enjoy ..." is near) are left out."""
    facts = sorted(persona_facts(path))
    by_attribute: dict[str, list[str]] = defaultdict(list)
    verbs = []
    for fact in facts:
        topic = about(fact)
        if topic is None or topic.subject != USER or topic.retracted:
            continue
        if is_verb_topic(topic.attribute):
            verbs.append(fact)
        elif topic.attribute != "likes" and not topic.attribute.startswith("amount:"):
            by_attribute[topic.attribute].append(fact)
    return {a: f for a, f in by_attribute.items() if len(f) >= MIN_FACTS}, verbs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--personas", type=Path, default=PERSONAS)
    parser.add_argument("--per-attribute", type=int, default=300)
    parser.add_argument("--precision", type=float, default=0.99)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    started = time.perf_counter()
    rng = random.Random(args.seed)
    embedder = make_embedder(load_settings(embedder="local", decider="offline"))
    assert embedder is not None
    names, prototypes, held_texts, held_labels = [], [], [], []
    labelled, verbs = labelled_facts(args.personas)
    for attribute, facts in sorted(labelled.items()):
        chosen = rng.sample(facts, min(len(facts), args.per_attribute))
        cut = int(len(chosen) * 0.7)
        vectors = embedder.embed(chosen[:cut])
        names.append(attribute)
        prototypes.append(unit_rows(vectors.mean(axis=0, keepdims=True))[0])
        held_texts += chosen[cut:]
        held_labels += [attribute] * (len(chosen) - cut)
        print(f"{attribute:<24} {len(facts):>6} facts, {cut} in the prototype")
    matrix = np.stack(prototypes)
    scores = embedder.embed(held_texts) @ matrix.T
    best = scores.argmax(axis=1)
    cosine, lead = _lead(scores)
    right = np.array([names[i] == label for i, label in zip(best, held_labels, strict=True)])
    stray_cosine, stray_lead = _lead(
        embedder.embed(rng.sample(verbs, min(len(verbs), 1000))) @ matrix.T
    )
    print(f"\nheld out: {len(held_texts)} facts; nearest prototype right {right.mean():.3f}")
    print(f"verb-topic facts: {len(verbs)}, {len(stray_lead)} sampled; cosine floor {FLOOR}")
    print(f"{'margin':>7} {'coverage':>9} {'precision':>10} {'stray':>7}")
    chosen_threshold = None
    for threshold in GRID:
        kept = (cosine >= FLOOR) & (lead >= threshold)
        precision = right[kept].mean() if kept.any() else 1.0
        stray = ((stray_cosine >= FLOOR) & (stray_lead >= threshold)).mean()
        print(f"{threshold:>7.2f} {kept.mean():>9.3f} {precision:>10.3f} {stray:>7.3f}")
        if chosen_threshold is None and precision >= args.precision:
            chosen_threshold = threshold
    if chosen_threshold is None:
        raise SystemExit(f"no margin reaches precision {args.precision}")
    np.savez_compressed(
        args.out,
        model=np.array(embedder.name),
        attributes=np.array(names),
        prototypes=matrix.astype(np.float32),
        margin=np.array(chosen_threshold),
        floor=np.array(FLOOR),
    )
    seconds = time.perf_counter() - started
    print(f"margin {chosen_threshold} -> {args.out} ({seconds:.0f} s)")


def _lead(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's best cosine and its lead over the second best."""
    ranked = np.sort(scores, axis=1)
    return ranked[:, -1], ranked[:, -1] - ranked[:, -2]


if __name__ == "__main__":
    main()
