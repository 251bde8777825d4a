"""How offline observe cuts kept messages into facts, and which it keeps for now only.

    python benchmarks/bench_pieces.py [--errors]

evals/chat_pieces.jsonl holds everyday first-person chat messages, each labelled `split`
(true: its "and I" clauses state facts that stand alone, so storing them apart is right;
false: a clause needs another, or there is one clause) and `for_now` ("plan", "location" or
"now": true for hours, short-term; null: lasting). memman/lifecycle/pieces.py is measured
against them: split precision (cut messages that may be cut; a wrong cut loses meaning, the
costly error) and recall, transient precision and recall. Also run over evals/
user_messages.jsonl (the messages utterance.py keeps) and every distinct MSC persona fact (all
lasting facts): how many would be cut or kept for now only.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from calibrate_lexical import DATA as SHARED
from topic_changes import persona_facts

from memman.jsonl import read_jsonl
from memman.language.topic import about
from memman.lifecycle.pieces import pieces, transient
from memman.lifecycle.utterance import skip_reason

EVALS = Path(__file__).resolve().parents[1] / "evals"
DATA = Path(os.environ.get("MEMMAN_DATA", SHARED))


def _ratio(hit: int, total: int) -> str:
    return f"{hit / total:.3f} ({hit}/{total})" if total else "- (0/0)"


def labelled(errors: bool) -> None:
    cases = read_jsonl(EVALS / "chat_pieces.jsonl", dict[str, object])
    cut = [c for c in cases if len(pieces(c["text"])) > 1]
    may = [c for c in cases if c["split"]]
    soon = [c for c in cases if transient(c["text"])]
    short = [c for c in cases if c["for_now"]]
    print(f"chat_pieces: {len(cases)} messages")
    print(f"  split precision {_ratio(sum(c['split'] for c in cut), len(cut))}", end="")
    print(f", recall {_ratio(sum(c in cut for c in may), len(may))}")
    print(f"  for-now precision {_ratio(sum(bool(c['for_now']) for c in soon), len(soon))}", end="")
    print(f", recall {_ratio(sum(c in soon for c in short), len(short))}")
    if errors:
        for c in cases:
            got, now = pieces(c["text"]), transient(c["text"])
            if (len(got) > 1) != c["split"] or bool(now) != bool(c["for_now"]):
                topics = [(t.attribute, t.value) if (t := about(p)) else None for p in got]
                print(f"    {c['text']!r}: {got} {topics} for now: {now}")


def kept(texts: list[str], name: str, errors: bool) -> None:
    """How many of these messages (those utterance.py keeps) are cut or are for now only."""
    texts = [t for t in texts if skip_reason(t) is None]
    cut = [t for t in texts if len(pieces(t)) > 1]
    soon = [t for t in texts if transient(t)]
    print(f"{name}: {len(texts)} kept; cut into clauses {len(cut)}, short-term {len(soon)}")
    if errors:
        for text in cut + soon:
            print(f"    {text!r}: {pieces(text)} for now: {transient(text)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--errors", action="store_true", help="List the cases that disagree.")
    args = parser.parse_args()
    labelled(args.errors)
    messages = [c["text"] for c in read_jsonl(EVALS / "user_messages.jsonl", dict[str, str])]
    kept(messages, "user_messages", args.errors)
    kept(persona_facts(DATA / "msc" / "msc_personas_all.json"), "msc", args.errors)


if __name__ == "__main__":
    main()
