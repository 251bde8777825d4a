"""Conflict suite: does each new fact find the memory it supersedes, among a user's other facts?

    python benchmarks/bench_conflicts.py [--modes offline,local,llm] [--json out.json]
        [--cases evals/conflicts.jsonl] [--personas .../msc_personas_all.json] [--seed 1]
        [--distractors-last]

Each case of `evals/conflicts.jsonl` gets its own user id. The user first holds 20-40
distractor facts: MSC personas have 4-20 facts each, so a distractor user is the facts of
consecutive train speakers from a seeded starting point, deduplicated (written with
`update_many`). Then the case's `existing` memories (`update_memory` each, in order; the
memory each lands in is what the case's `target` names), then the candidate
(`update_memory`). The distractors are realistic, not filtered: one may be on the same topic
as the case, as a real user's memory would be; the choice is the same on every run. With
`--distractors-last` they are written after the case's memories instead, so the memory a
candidate supersedes is not the user's newest: what is found only by recency (the profile of
single-valued memories, newest first) shows here. A distractor may then change a case's
memory before the candidate arrives (an MSC "I live in Ohio" replaces the case's "I live in
Leeds" by topic), so the figures move for that reason too.

Modes, one SQLite file each under a temporary directory (`--pg URL`: a fresh database each
on that PostgreSQL server instead):
- `offline`: no LLM, no embedder (the deterministic tiers and the offline decider).
- `local`: embedder "local" (all-MiniLM-L6-v2), no LLM; skipped with a message if it cannot load.
- `llm`: the LLM decider against tests/fake_openai.py, no embedder. This judges routing, not
  decisions: how many calls a candidate costs and which memories the decider was shown (read
  from the prompt of each call). The fake is an oracle for the case's candidate: when its prompt
  shows the target it answers as the case expects (supersede: UPDATE the target to the
  candidate; noop: NOOP on it; keep_both: ADD), otherwise ADD, and every other call (the
  distractors, the existing memories) ADD. So "still active" counts the cases routing lost
  (the target never shown, or a tier settled them wrongly before any call), as offline; a
  fake answering ADD to everything counted its own answers (session 6: 0.22 against 0.08).
- `local+llm`: `llm` with the `local` embedder, as a user with an API key and the `local`
  extra runs memman; skipped like `local`.

Metrics, overall, per kind and per style:
- recall: supersede and noop cases whose target was considered: a key of the candidate's audit
  event `scores` (one per related memory), the result's memory, or (llm) quoted in a prompt.
- still active: supersede cases whose target is still active with its old content.
- false updates: keep_both cases whose target was changed, retired or NOOPed onto.
- kept apart: keep_both cases whose candidate ended as its own active memory.
- noop accuracy: noop cases settled as a NOOP on the target.
- calls: LLM calls per candidate (llm mode); ops and tiers of the candidates' decisions.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import RootModel, model_validator

from memman import MemoryManager, Op
from memman.config import load_settings
from memman.errors import MemmanError
from memman.jsonl import read_jsonl
from memman.models import Status

if TYPE_CHECKING:
    from tests.fake_openai import Reply

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "evals" / "conflicts.jsonl"
DATA = Path(os.environ.get("MEMMAN_DATA", ROOT.parent / "shared" / "data"))
PERSONAS = DATA / "msc" / "msc_personas_all.json"
KINDS = (
    "contradiction_disjoint",
    "contradiction_shared",
    "changed_number",
    "negation",
    "retraction",
    "refinement",
    "lookalike",
    "paraphrase",
)
EXPECTS = ("supersede", "keep_both", "noop")
STYLES = ("first", "third")
MODES = ("offline", "local", "llm", "local+llm")
DISTRACTORS = (20, 40)  # facts per distractor user, inclusive


@dataclass(frozen=True)
class Case:
    name: str
    kind: str
    style: str
    existing: list[str]
    candidate: str
    expect: str
    target: int | None


class _CaseLine(RootModel[dict[str, Any]]):
    """One line of the suite, checked by _problem."""

    @model_validator(mode="after")
    def _valid(self) -> _CaseLine:
        problem = _problem(self.root)
        if problem:
            raise ValueError(problem)
        return self


def load_cases(path: Path = CASES) -> list[Case]:
    """The suite, validated: a malformed line raises BadLineError (a ValueError) naming its
    file and line number."""
    return [Case(**line.root) for line in read_jsonl(path, _CaseLine)]


def _problem(row: object) -> str | None:
    fields = {"name", "kind", "style", "existing", "candidate", "expect", "target"}
    if not isinstance(row, dict) or set(row) != fields:
        return f"expected exactly the fields {sorted(fields)}"
    existing, target = row["existing"], row["target"]
    texts = existing if isinstance(existing, list) else []
    checks = [
        (isinstance(row["name"], str) and row["name"] != "", "name must be a non-empty string"),
        (row["kind"] in KINDS, f"kind must be one of {KINDS}"),
        (row["style"] in STYLES, f"style must be one of {STYLES}"),
        (row["expect"] in EXPECTS, f"expect must be one of {EXPECTS}"),
        (
            isinstance(existing, list) and existing != []
            and all(isinstance(t, str) and t.strip() for t in texts),
            "existing must be a non-empty list of non-empty strings",
        ),
        (
            isinstance(row["candidate"], str) and row["candidate"].strip() != "",
            "candidate must be a non-empty string",
        ),
        (
            type(target) is int and 0 <= target < len(texts),
            "target must index existing (every kind has a target memory)",
        ),
    ]  # fmt: skip
    return next((message for ok, message in checks if not ok), None)


def persona_speakers(path: Path = PERSONAS) -> list[list[str]]:
    """Each MSC train speaker's distinct facts, in file order."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        list(dict.fromkeys(facts))
        for dialogue in data["train"]
        for name, facts in dialogue.items()
        if name.startswith("Speaker")
    ]


def distractors(speakers: list[list[str]], case_name: str, seed: int) -> list[str]:
    """20-40 facts for one case's user: consecutive speakers from a point fixed by (seed, name)."""
    rng = random.Random(f"{seed}/{case_name}")
    wanted = rng.randint(*DISTRACTORS)
    start = rng.randrange(len(speakers))
    facts: dict[str, None] = {}
    for offset in range(len(speakers)):
        facts.update(dict.fromkeys(speakers[(start + offset) % len(speakers)]))
        if len(facts) >= wanted:
            break
    return list(facts)[:wanted]


@dataclass(frozen=True)
class Outcome:
    name: str
    kind: str
    style: str
    expect: str
    op: str
    tier: str
    recalled: bool  # the target was among what the router or decider considered
    target_intact: bool  # the target is still active with its content before the candidate
    onto_target: bool  # the candidate's decision names the target memory
    candidate_apart: bool  # the candidate is an active memory other than the target
    llm_calls: int | None = None
    shown_target: bool | None = None  # llm mode: the target was quoted in a prompt


Prompts = Callable[[], list[str]]  # the user-message text of every chat request so far
# A shown memory in a decision prompt: "[3] (2026-03-01) "I live in Berlin"".
_SHOWN = re.compile(r'^\[(?P<id>\d+)\] \([^)]*\) (?P<text>".*")$', re.M)


@dataclass
class Oracle:
    """What the fake LLM knows of the candidate being written: its case and target text."""

    case: Case | None = None
    target: str | None = None

    def reply(self, request: dict) -> Reply:
        """The case's expected decision when the prompt shows the target, else ADD."""
        from tests.decisions import add_everything, answer

        prompt = "\n".join(m.get("content") or "" for m in request["messages"])
        case = self.case
        if request["tools"][0]["function"]["name"] == "BatchDecisions" or case is None:
            return add_everything(request)
        shown = [
            int(m.group("id"))
            for m in _SHOWN.finditer(prompt)
            if json.loads(m.group("text")) == self.target
        ]
        if not shown or case.expect == "keep_both":
            return answer("ADD", reason="a fact of its own")
        if case.expect == "noop":
            return answer("NOOP", id=shown[0], reason="already known")
        return answer("UPDATE", id=shown[0], content=case.candidate, reason="newer")


def run_case(
    mm: MemoryManager,
    case: Case,
    user_id: str,
    facts: list[str],
    prompts: Prompts | None = None,
    oracle: Oracle | None = None,
    distractors_last: bool = False,
) -> Outcome:
    """Seed the user with `facts` and the case's memories (or the memories, then `facts`:
    `distractors_last`), write the candidate, judge it."""
    if facts and not distractors_last:
        mm.update_many(facts, user_id=user_id)
    landed = [mm.update_memory(text, user_id=user_id).memory_id for text in case.existing]
    if facts and distractors_last:
        mm.update_many(facts, user_id=user_id)
    assert case.target is not None  # load_cases guarantees it
    target_id = landed[case.target]
    if target_id is None:
        raise RuntimeError(f"{case.name}: the target memory was not stored (decider failed?)")
    before = mm.get(target_id, user_id=user_id).content
    asked = len(prompts()) if prompts else 0

    if oracle is not None:
        oracle.case, oracle.target = case, before
    try:
        result = mm.update_memory(case.candidate, user_id=user_id)
    finally:
        if oracle is not None:
            oracle.case = oracle.target = None

    event = next(e for e in mm.events(user_id=user_id, limit=20) if e.id == result.event_id)
    after = mm.get(target_id, user_id=user_id)
    new_prompts = prompts()[asked:] if prompts else []
    quoted = json.dumps(before, ensure_ascii=False)
    shown = any(quoted in text for text in new_prompts) if prompts else None
    onto = result.memory_id == target_id
    apart = (
        result.memory_id is not None
        and not onto
        and mm.get(result.memory_id, user_id=user_id).status == Status.ACTIVE
    )
    return Outcome(
        name=case.name,
        kind=case.kind,
        style=case.style,
        expect=case.expect,
        op=result.op.value,
        tier=result.tier.value,
        recalled=target_id in event.scores or onto or bool(shown),
        target_intact=after.status == Status.ACTIVE and after.content == before,
        onto_target=onto,
        candidate_apart=apart,
        llm_calls=len(new_prompts) if prompts else None,
        shown_target=shown,
    )


def _rate(hits: int, total: int) -> float | None:
    return hits / total if total else None


def score(outcomes: list[Outcome]) -> dict[str, dict[str, float | int | None]]:
    """Metrics for `overall`, each `kind:<kind>` and each `style:<style>` present."""
    groups: dict[str, list[Outcome]] = {"overall": outcomes}
    for o in outcomes:
        groups.setdefault(f"kind:{o.kind}", []).append(o)
    for o in outcomes:
        groups.setdefault(f"style:{o.style}", []).append(o)
    return {name: _metrics(members) for name, members in groups.items()}


def _metrics(outcomes: list[Outcome]) -> dict[str, float | int | None]:
    supersede = [o for o in outcomes if o.expect == "supersede"]
    keep = [o for o in outcomes if o.expect == "keep_both"]
    noop = [o for o in outcomes if o.expect == "noop"]
    targeted = supersede + noop
    calls = [o.llm_calls for o in outcomes if o.llm_calls is not None]
    return {
        "cases": len(outcomes),
        "recall": _rate(sum(o.recalled for o in targeted), len(targeted)),
        "still_active": _rate(sum(o.target_intact for o in supersede), len(supersede)),
        "false_updates": _rate(sum(not o.target_intact or o.onto_target for o in keep), len(keep)),
        "kept_apart": _rate(sum(o.candidate_apart for o in keep), len(keep)),
        "noop_accuracy": _rate(
            sum(o.op == Op.NOOP and o.onto_target and o.target_intact for o in noop), len(noop)
        ),
        "llm_calls_per_candidate": sum(calls) / len(calls) if calls else None,
    }


# -- modes -------------------------------------------------------------------------------------


@contextmanager
def _fake_llm(embedder: str) -> Iterator[tuple[dict, Prompts, Oracle]]:
    """The fake OpenAI server answering as `Oracle` does (tools mode), one decision per
    candidate of a batch call too (the distractors' update_many is batched: answered with one
    decision, they were parked, not stored, before session 6)."""
    sys.path.insert(0, str(ROOT))
    from tests.fake_openai import FakeOpenAI

    oracle = Oracle()
    server = FakeOpenAI(default_reply=oracle.reply).start()

    def prompts() -> list[str]:
        return [
            message["content"]
            for request in list(server.requests)
            if request["path"].endswith("/chat/completions") and "json" in request
            for message in request["json"]["messages"]
            if message.get("role") == "user"
        ]

    try:
        yield fake_llm_settings(server.base_url, embedder), prompts, oracle
    finally:
        server.stop()


def fake_llm_settings(base_url: str, embedder: str) -> dict:
    """The settings of the LLM decider against a fake server at base_url (tools mode)."""
    return {
        "llm_model": "fake-model",
        "llm_base_url": base_url,
        "llm_api_key": "x",
        "llm_mode": "tools",
        "decider": "llm",
        "embedder": embedder,
    }


def _local_loads() -> str | None:
    """None if the local embedder loads and embeds, else why not."""
    try:
        settings = load_settings(embedder="local", decider="offline")
        with MemoryManager(":memory:", settings=settings) as mm:
            if mm.embedder is None:
                return "no embedder configured"
            mm.embedder.embed(["probe"])
    except (MemmanError, ImportError, OSError) as error:
        return f"{type(error).__name__}: {error}"
    return None


def run_mode(
    mode: str,
    cases: list[Case],
    speakers: list[list[str]],
    seed: int,
    folder: Path,
    pg: str | None = None,
    distractors_last: bool = False,
) -> dict | None:
    """Every case in one store for `mode` (a SQLite file, or a fresh database on the
    PostgreSQL server at pg); None (with a message) if the mode is unavailable."""
    if mode.startswith("local") and (why := _local_loads()):
        print(f"{mode}: skipped, the model does not load ({why})")
        return None
    with (
        _mode_settings(mode) as (settings, prompts, oracle),
        _store(folder / f"{mode}.db", pg) as path,
    ):
        started = time.perf_counter()
        with MemoryManager(path, settings=load_settings(db=path, **settings)) as mm:
            outcomes = [
                run_case(
                    mm,
                    case,
                    f"case{i}",
                    distractors(speakers, case.name, seed),
                    prompts,
                    oracle,
                    distractors_last,
                )
                for i, case in enumerate(cases)
            ]
        seconds = time.perf_counter() - started
    return {
        "seconds": round(seconds, 1),
        "metrics": score(outcomes),
        "ops": dict(Counter(f"{o.op}/{o.tier}" for o in outcomes).most_common()),
        "outcomes": [asdict(o) for o in outcomes],
    }


@contextmanager
def _store(file: Path, pg: str | None) -> Iterator[str]:
    if pg is None:
        yield str(file)
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.postgres import fresh_database

    with fresh_database(pg) as url:
        yield url


@contextmanager
def _mode_settings(mode: str) -> Iterator[tuple[dict, Prompts | None, Oracle | None]]:
    if mode.endswith("llm"):
        with _fake_llm("local" if mode.startswith("local") else "none") as found:
            yield found
    else:
        embedder = "none" if mode == "offline" else mode
        yield {"decider": "offline", "embedder": embedder}, None, None


# -- report ------------------------------------------------------------------------------------

COLUMNS = (
    ("cases", "n"),
    ("recall", "recall"),
    ("still_active", "still act."),
    ("false_updates", "false upd."),
    ("kept_apart", "kept apart"),
    ("noop_accuracy", "noop acc."),
    ("llm_calls_per_candidate", "calls/cand."),
)


def table(mode: str, report: dict) -> str:
    def cell(value: float | int | None) -> str:
        if value is None:
            return "-"
        return str(value) if isinstance(value, int) else f"{value:.2f}"

    lines = [f"mode {mode} ({report['seconds']} s)"]
    lines.append(f"{'group':<30}" + "".join(f"{label:>12}" for _, label in COLUMNS))
    for group, metrics in report["metrics"].items():
        lines.append(f"{group:<30}" + "".join(f"{cell(metrics[k]):>12}" for k, _ in COLUMNS))
    lines.append("ops/tiers: " + ", ".join(f"{k} {v}" for k, v in report["ops"].items()))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--modes", default=",".join(MODES), help="comma-separated: " + ", ".join(MODES)
    )
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--personas", type=Path, default=PERSONAS)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write every mode's numbers and outcomes here")
    parser.add_argument("--pg", help="a PostgreSQL server's URL: each mode's store is there")
    parser.add_argument(
        "--distractors-last",
        action="store_true",
        help="write the distractors after the case's memories (the target is then not the newest)",
    )
    args = parser.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = set(modes) - set(MODES)
    if unknown:
        parser.error(f"unknown modes {sorted(unknown)}; choose from {', '.join(MODES)}")
    cases = load_cases(args.cases)
    speakers = persona_speakers(args.personas)
    print(f"{len(cases)} cases, {len(speakers)} MSC speakers, seed {args.seed}")
    reports = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in modes:
            report = run_mode(
                mode, cases, speakers, args.seed, Path(tmp), args.pg, args.distractors_last
            )
            if report is not None:
                reports[mode] = report
                print(table(mode, report), flush=True)
    if args.json:
        args.json.write_text(json.dumps(reports, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
