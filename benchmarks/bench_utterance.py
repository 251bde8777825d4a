"""How well offline extraction tells the user's statements from talk to the assistant.

    python benchmarks/bench_utterance.py [--errors] [--msc]

evals/user_messages.jsonl holds hand-written user messages, each labelled `statement` (it
says something about the user, possibly with a question or request attached: to be kept),
`question`, `request` or `chatter` (not a fact: to be skipped). `split` is `dev` (the rules
in memman/lifecycle/utterance.py were written looking at these) or `holdout` (written with the dev
set, before the rules, and not used to tune them).

Reported per split, with "skip" as the positive class: precision (skipped messages that are
really not facts), recall (questions, requests and chatter that are skipped) and the
statements lost (kept messages wrongly skipped: the costly error, a fact never stored).
--msc also reads every distinct Multi-Session Chat persona fact (30,943 first-person
statements, /work/shared/data/msc) and counts those that would be skipped: all are facts.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from pathlib import Path

from calibrate_lexical import DATA as SHARED
from topic_changes import persona_facts

from memman.jsonl import read_jsonl
from memman.lifecycle.utterance import skip_reason

# MEMMAN_DATA: the shared data folder, for a checkout elsewhere than /work/main.
DATA = Path(os.environ.get("MEMMAN_DATA", SHARED))
CASES = Path(__file__).resolve().parents[1] / "evals" / "user_messages.jsonl"


def load() -> list[dict[str, str]]:
    return read_jsonl(CASES, dict[str, str])


def report(name: str, cases: list[dict[str, str]], show_errors: bool) -> None:
    confusion: Counter[tuple[str, str]] = Counter()
    errors = []
    for case in cases:
        why = skip_reason(case["text"])
        predicted = "keep" if why is None else "skip"
        expected = "keep" if case["label"] == "statement" else "skip"
        confusion[expected, predicted] += 1
        if predicted != expected:
            errors.append(f"  {case['label']:>9} -> {predicted}: {case['text']}")
    tp, fp = confusion["skip", "skip"], confusion["keep", "skip"]
    fn, kept = confusion["skip", "keep"], confusion["keep", "keep"]
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    print(
        f"{name}: {len(cases)} messages ({tp + fn} not facts, {fp + kept} statements);"
        f" skip precision {precision:.3f} ({tp}/{tp + fp}), recall {recall:.3f} ({tp}/{tp + fn});"
        f" statements lost {fp}/{fp + kept}"
    )
    labels = Counter(c["label"] for c in cases)
    skipped = Counter(c["label"] for c in cases if skip_reason(c["text"]) is not None)
    print("  skipped by label: " + ", ".join(f"{k} {skipped[k]}/{n}" for k, n in labels.items()))
    if show_errors:
        print("\n".join(errors))


def msc(show_errors: bool) -> None:
    facts = sorted(persona_facts(DATA / "msc" / "msc_personas_all.json"))
    lost = [(fact, why) for fact in facts if (why := skip_reason(fact)) is not None]
    share = len(lost) / len(facts)
    print(f"msc: {len(facts)} distinct persona facts; skipped {len(lost)} ({share:.3%})")
    if show_errors:
        for fact, why in lost[:50]:
            print(f"  skipped ({why}): {fact}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--errors", action="store_true", help="List every misclassified message.")
    parser.add_argument("--msc", action="store_true", help="Also check the MSC persona facts.")
    args = parser.parse_args()
    cases = load()
    for split in ("dev", "holdout", "holdout2"):
        report(split, [c for c in cases if c["split"] == split], args.errors)
    report("all", cases, False)
    if args.msc:
        msc(args.errors)


if __name__ == "__main__":
    main()
