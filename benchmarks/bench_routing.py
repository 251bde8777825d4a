"""Routing suite (issue 27): does each fact of a chat message reach the memories it makes out
of date, among a realistic user's 50-200 others, and leave the rest alone?

    python benchmarks/bench_routing.py --sets routing_dev --modes offline,oracle
        [--limit N] [--json out.json]
    python benchmarks/bench_routing.py --sets S --modes recorded,local+recorded \\
        --record-requests requests.jsonl [--answers answers.jsonl]
    python benchmarks/bench_routing.py --sets S --modes recorded,local+recorded \\
        --answers answers.jsonl

A set is a pair of files, `evals/<set>_personas.jsonl` (lines `{"persona", "memories"}`) and
`evals/<set>_cases.jsonl` (lines `{"name", "persona", "existing", "message", "facts",
"outcomes", "question", "current"}`, one outcome per fact: `{"op": "supersede"|"add"|"noop",
"targets": [...], "keep": [...]}` naming stored texts). `routing_dev` is a DEV set written by
the author of this script while writing it, not blind: figures on it show the script works,
not how memman does.

Per case, a user of its own: the persona's memories and the case's `existing` are copied
verbatim (import_jsonl of an export-format file built here: no decision can merge or replace
them) and given the offline reader's topics (relabel), dated days apart before the write;
then the case's facts are written with one `update_many`. The clock is fixed (the same day
every run), so a decision prompt is the same text from run to run.

Modes (one SQLite file per set and mode):
- `offline`: no LLM, no embedder. `local`: embedder "local" (MiniLM), no LLM; skipped with a
  message if the model cannot load.
- `oracle`, `local+oracle`: the LLM decider against tests/fake_openai.py answering from the
  case's outcomes: per candidate of the request (one MemoryDecision, or each numbered
  candidate of a BatchDecisions prompt), the shown memories that are the fact's targets;
  supersede: UPDATE(id = the first shown target, content = the fact, also = the other shown
  targets), noop: NOOP(id), otherwise (or no target shown) ADD. `also` is the optional field
  issue 27 adds to UPDATE and DELETE; a schema without it ignores it.
- `recorded`, `local+recorded`: answers a capable model gave to these very requests.
  `--record-requests OUT` answers every decision ADD (or from `--answers` where it has the
  request) and writes each request it had no answer for, a line each:
  `{"key": sha256 hex of the messages' contents joined by "\\n", "messages": [...], "tool":
  "MemoryDecision"|"BatchDecisions", "schema": {the tool's JSON schema}, "set", "case", "mode"}`.
  `--answers FILE` replays lines `{"key": ..., "answer": {the tool call's arguments},
  "source": "model or person who answered"}`; a request not in FILE gets HTTP 500 (memman
  parks the fact: a miss) and is counted as missing. An answer that changes what a later
  request of the same case shows makes that request new: record again with `--answers`
  until nothing is missing.
- `recorded-one`, `recorded-two` (and `local+` each): the case's chat message, not its facts,
  through `observe` + `flush` with `llm_turn_calls` "one" (extraction and decisions in one
  call, issue 28) or "two" (extraction, then decisions as update_many makes them), each
  answered from FILE like the decisions (record rounds: a missing extraction is answered
  with no facts, its decisions come in the next round). The model's facts need not be the
  case's, so such a case is judged whole, on the store: targets stale, keeps changed, noop
  targets NOOPed onto, and adds as new active memories (at most the case's add count).
  `recorded-one` decides again, alone, a fact the combined call says replaces memories
  (`llm_turn_recheck`, the default); `recorded-one-strict` applies the combined answer as it is.

Metrics per set and mode:
- routing recall: supersede targets the fact's decision was shown (a key of its audit
  event's `scores`; for a fact decided by the combined call, the memories of its own route
  that call listed) or acted on (the fact's memory, or the target changed or retired by the
  write); a parked fact reached nothing. `recall 2nd+`: the same for the non-first targets.
- stale: supersede targets still active with their old content after the write.
- false updates: `keep` memories changed, retired or NOOPed onto.
- unrelated: stored memories, neither a target nor a keep of the case, changed or retired.
- noop accuracy: noop facts settled as a NOOP on their target; added: add facts stored as
  their own new active memory.
- current first: cases with a question whose `context(question).text` shows a line with the
  `current` words, or the text of a memory the write left active for a superseding fact (a
  model's UPDATE words the value its own way: "parkrun PB: 19:30" for "PB is 19:30"),
  before any line with a still-active target's text.
- LLM calls and prompt tokens (characters / 4 of the messages) per fact, at the fake server.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this worktree's memman, not the one installed in the venv

from bench_conflicts import _SHOWN, _local_loads, _rate, fake_llm_settings  # noqa: E402

from memman import MemoryManager, Op  # noqa: E402
from memman.config import load_settings  # noqa: E402
from memman.jsonl import read_jsonl  # noqa: E402
from memman.models import Status, UpdateResult  # noqa: E402
from tests.decisions import decision  # noqa: E402
from tests.fake_openai import FakeOpenAI, Reply, chat_completion  # noqa: E402
from tests.routing_cases import Case, Outcome, fixed_clock, load_set, seed  # noqa: E402

MODES = (
    "offline",
    "local",
    "oracle",
    "local+oracle",
    "recorded",
    "local+recorded",
    "recorded-one",
    "recorded-one-strict",
    "recorded-two",
    "local+recorded-one",
    "local+recorded-one-strict",
    "local+recorded-two",
)
DECISION_TOOLS = ("MemoryDecision", "BatchDecisions")
EXTRACTION_TOOLS = ("DecidedFacts", "ExtractedFacts")  # the chat-message modes' first call
CHARS_PER_TOKEN = 4


# -- the set -----------------------------------------------------------------------------------


# -- the fake model ----------------------------------------------------------------------------

_CANDIDATE = re.compile(r'^Candidate(?: (?P<number>\d+))?: (?P<text>".*")$', re.M)


def _shown_per_candidate(prompt: str) -> list[tuple[int | None, str, dict[str, int]]]:
    """(number, candidate text, {shown text: short id}) per candidate of a decision prompt.
    Both templates list the memories once, before the candidates, and any candidate may act
    on any of them; a MemoryDecision's one candidate has no number."""
    found = list(_CANDIDATE.finditer(prompt))
    head = prompt[: found[0].start()] if found else prompt
    shown: dict[str, int] = {}
    for m in _SHOWN.finditer(head):
        shown.setdefault(json.loads(m.group("text")), int(m.group("id")))
    single = len(found) == 1 and found[0].group("number") is None
    return [
        (None if single else int(match.group("number")), json.loads(match.group("text")), shown)
        for match in found
    ]


def _joined(request: dict) -> str:
    return "\n".join(str(m.get("content") or "") for m in request["messages"])


def request_key(request: dict) -> str:
    """The key of a chat request in the record and answer files."""
    return hashlib.sha256(_joined(request).encode()).hexdigest()


def _tool(request: dict) -> str | None:
    tools = request.get("tools") or []
    return tools[0]["function"]["name"] if tools else None


def _reply(tool: str, arguments: dict) -> Reply:
    return Reply(body=chat_completion(tool_args=arguments, tool_name=tool))


def _answers(tool: str, decisions: list[tuple[int | None, dict]]) -> Reply:
    if tool == "MemoryDecision":
        return _reply(tool, {"decision": decisions[0][1]})
    items = [{"number": number, "decision": d} for number, d in decisions]
    return _reply(tool, {"decisions": items})


@dataclass
class Oracle:
    """Answers each decision from the outcomes of the case being written."""

    outcomes: dict[str, Outcome] = field(default_factory=dict)  # fact text -> its outcome

    def reply(self, request: dict) -> Reply:
        tool = _tool(request)
        if tool not in DECISION_TOOLS:
            return Reply(500, {"error": {"message": f"oracle: no answer for {tool}"}})
        return _answers(
            tool,
            [
                (number, self._decide(text, shown))
                for number, text, shown in _shown_per_candidate(_joined(request))
            ],
        )

    def _decide(self, fact: str, shown: dict[str, int]) -> dict:
        outcome = self.outcomes.get(fact)
        ids = [shown[t] for t in outcome.targets if t in shown] if outcome else []
        if not ids or outcome is None or outcome.op == "add":
            return decision("ADD", reason="a fact of its own")["decision"]
        if outcome.op == "noop":
            return decision("NOOP", id=ids[0], reason="already known")["decision"]
        update = decision("UPDATE", id=ids[0], content=fact, also=ids[1:], reason="newer")
        return update["decision"]


@dataclass
class Replay:
    """Answers from a file of recorded answers; records (or 500s) the requests it lacks."""

    answers: dict[str, dict]
    record: bool  # answer a missing request ADD and keep it, rather than 500
    recorded: dict[str, dict] = field(default_factory=dict)
    missing: set[str] = field(default_factory=set)  # keys it had no answer for, this mode
    where: dict[str, str] = field(default_factory=dict)  # set, case, mode of the running case

    def reply(self, request: dict) -> Reply:
        tool = _tool(request)
        key = request_key(request)
        answered = (*DECISION_TOOLS, *EXTRACTION_TOOLS)
        if tool in answered and key in self.answers:
            return _reply(tool, self.answers[key])
        self.missing.add(key)
        if not self.record or tool not in answered:
            return Reply(500, {"error": {"message": "no recorded answer for this request"}})
        schema = request["tools"][0]["function"].get("parameters")
        self.recorded.setdefault(
            key,
            {"key": key, "messages": request["messages"], "tool": tool, "schema": schema}
            | self.where,
        )
        if tool in EXTRACTION_TOOLS:
            return _reply(tool, {"facts": []})  # its facts come with the next round's answers
        numbers = [number for number, _, _ in _shown_per_candidate(_joined(request))]
        add = decision("ADD", reason="recording")["decision"]
        return _answers(tool, [(number, add) for number in numbers])


def load_answers(path: Path) -> dict[str, dict]:
    return {row["key"]: row["answer"] for row in read_jsonl(path, dict)}


# -- one case ----------------------------------------------------------------------------------


@dataclass
class Judged:
    """What one case's write did, fact by fact, against its outcomes."""

    name: str
    facts: int
    ops: list[str]  # op/tier per fact
    targets: int = 0  # supersede targets
    routed: int = 0
    later_targets: int = 0  # non-first targets of multi-target supersessions
    later_routed: int = 0
    stale: int = 0
    keeps: int = 0
    false_updates: int = 0
    unrelated: int = 0
    noops: int = 0
    noops_right: int = 0
    adds: int = 0
    adds_apart: int = 0
    parked: int = 0
    current_first: bool | None = None
    calls: int = 0
    prompt_tokens: int = 0
    notes: list[str] = field(default_factory=list)


def _state(mm: MemoryManager, user_id: str) -> dict[str, tuple[str, Status]]:
    return {m.id: (m.content, m.status) for m in mm.list(user_id=user_id, include_inactive=True)}


_DATED = re.compile(r" \([^()]*\)$")  # the "(1 June 2026)" a context line ends with


def _line_has(line: str, words: str) -> bool:
    """Every word of `words` begins a word of the line, its date left out: "Wednesday" is in
    "on Wednesdays", "7" is not in "(17 January 2025)"."""
    text = _DATED.sub("", line)
    return all(re.search(rf"\b{re.escape(word)}", text, re.I) for word in re.findall(r"\w+", words))


def run_case(
    mm: MemoryManager,
    case: Case,
    persona: list[str],
    user_id: str,
    requests: Callable[[], list[dict]] | None,
    oracle: Oracle | None,
    *,
    message: bool = False,
) -> Judged:
    """One case: its facts through update_many, or (`message`) its chat message through
    observe + flush, where the model extracts the facts itself and the case is judged whole."""
    ids = seed(mm, user_id, [*persona, *case.existing])
    before = _state(mm, user_id)
    asked = len(requests()) if requests else 0
    if oracle is not None:
        oracle.outcomes = dict(zip(case.facts, case.outcomes, strict=True))
    error = None
    try:
        if message:
            said = [{"role": "user", "content": case.message}]
            observed = mm.observe(said, user_id=user_id, session_id=user_id)
            flushed = mm.flush(user_id, user_id=user_id)
            results = [*observed.results, *flushed.results]
            error = observed.error or flushed.error
        else:
            results = mm.update_many(case.facts, user_id=user_id)
    finally:
        if oracle is not None:
            oracle.outcomes = {}
    after = _state(mm, user_id)
    events = {e.id: e for e in mm.export_events(user_id=user_id)}
    judged = Judged(case.name, len(case.facts), [f"{r.op}/{r.tier}" for r in results])
    named = {ids[t] for o in case.outcomes for t in (*o.targets, *o.keep)}
    changed = {i for i, was in before.items() if after.get(i) != was}
    judged.unrelated = len(changed - named)
    if message:
        _judge_message(judged, case, results, events, ids, before, after)
        if error:
            judged.parked += len(case.facts)
            judged.notes.append(f"no extraction: {error}")
    else:
        for fact, outcome, result in zip(case.facts, case.outcomes, results, strict=True):
            _judge_fact(judged, fact, outcome, result, events, ids, before, after)
    if requests:
        new = requests()[asked:]
        judged.calls = len(new)
        judged.prompt_tokens = sum(len(_joined(r)) for r in new) // CHARS_PER_TOKEN
    if case.question and case.current:
        # The memories the write added or rewrote (for a superseding fact; any, for a
        # message, whose facts are the model's own), a kept memory never among them.
        keeps = {ids[t] for o in case.outcomes for t in o.keep}
        superseding = [o.op == "supersede" for o in case.outcomes]
        written = {
            r.memory_id
            for i, r in enumerate(results)
            if r.op in (Op.ADD, Op.UPDATE)
            and r.memory_id in after
            and r.memory_id not in keeps
            and (message or superseding[i])
        }
        current = [after[i][0] for i in written if after[i][1] == Status.ACTIVE]
        judged.current_first = _current_first(mm, case, user_id, ids, before, after, current)
    return judged


def _judge_message(
    judged: Judged,
    case: Case,
    results: list[UpdateResult],
    events: dict,
    ids: dict[str, str],
    before: dict,
    after: dict,
) -> None:
    """A chat message's write judged whole: the facts the model extracted need not be the
    case's, so targets, keeps, noops and adds are checked on the store, not fact by fact."""
    shown = {
        key
        for r in results
        if r.op != Op.PENDING and (e := events.get(r.event_id)) is not None
        for key in e.scores
    }
    acted = {r.memory_id for r in results if r.op != Op.PENDING}
    judged.parked += sum(r.op == Op.PENDING for r in results)
    noop_targets = {ids[t] for o in case.outcomes if o.op == "noop" for t in o.targets}
    for outcome in case.outcomes:
        for i, text in enumerate(outcome.targets if outcome.op == "supersede" else []):
            target = ids[text]
            still = after[target] == before[target]
            reached = target in shown or target in acted or not still
            why = f"{text!r} ({', '.join(judged.ops) or 'no facts'})"
            _tally_target(judged, later=i > 0, reached=reached, still=still, why=why)
        for text in outcome.keep:
            keep = ids[text]
            hit = after[keep] != before[keep] or (
                keep not in noop_targets
                and any(r.op == Op.NOOP and r.memory_id == keep for r in results)
            )
            _tally_keep(judged, hit=hit, why=repr(text))
        if outcome.op == "noop":
            judged.noops += 1
            judged.noops_right += any(
                r.op == Op.NOOP and r.memory_id in {ids[t] for t in outcome.targets}
                for r in results
            )
    adds = sum(o.op == "add" for o in case.outcomes)
    new = [i for i, (_, status) in after.items() if i not in before and status == Status.ACTIVE]
    judged.adds += adds
    judged.adds_apart += min(adds, len(new))


def _tally_target(judged: Judged, *, later: bool, reached: bool, still: bool, why: str) -> None:
    """One supersede target: shown or acted on (`reached`), still active (`still`)."""
    judged.targets += 1
    judged.routed += reached
    if later:
        judged.later_targets += 1
        judged.later_routed += reached
    judged.stale += still
    if still:
        judged.notes.append(f"stale: {why}")


def _tally_keep(judged: Judged, *, hit: bool, why: str) -> None:
    """One look-alike the case keeps: changed, retired or NOOPed onto (`hit`)."""
    judged.keeps += 1
    judged.false_updates += hit
    if hit:
        judged.notes.append(f"false update: {why}")


def _judge_fact(
    judged: Judged,
    fact: str,
    outcome: Outcome,
    result: UpdateResult,
    events: dict,
    ids: dict[str, str],
    before: dict,
    after: dict,
) -> None:
    event = events.get(result.event_id)
    shown = set(event.scores) if event is not None and result.op != Op.PENDING else set()
    judged.parked += result.op == Op.PENDING
    for i, text in enumerate(outcome.targets if outcome.op == "supersede" else []):
        target = ids[text]
        acted = result.memory_id == target or after[target] != before[target]
        reached = result.op != Op.PENDING and (target in shown or acted)
        still = after[target] == before[target]
        why = f"{text!r} <- {fact!r} ({result.op}/{result.tier})"
        _tally_target(judged, later=i > 0, reached=reached, still=still, why=why)
    for text in outcome.keep:
        keep = ids[text]
        hit = after[keep] != before[keep] or (result.op == Op.NOOP and result.memory_id == keep)
        _tally_keep(judged, hit=hit, why=f"{text!r} <- {fact!r}")
    if outcome.op == "noop":
        judged.noops += 1
        judged.noops_right += result.op == Op.NOOP and result.memory_id in {
            ids[t] for t in outcome.targets
        }
    if outcome.op == "add":
        judged.adds += 1
        own = after.get(result.memory_id) if result.memory_id not in before else None
        judged.adds_apart += result.op == Op.ADD and own is not None and own[1] == Status.ACTIVE


def _current_first(
    mm: MemoryManager,
    case: Case,
    user_id: str,
    ids: dict,
    before: dict,
    after: dict,
    current: list[str],
) -> bool:
    """The first context line showing the current value (its words, or a memory the write
    left active for it) or a still-active old target is the current value's."""
    assert case.question and case.current
    old = [
        t
        for o in case.outcomes
        if o.op == "supersede"
        for t in o.targets
        if after[ids[t]] == before[ids[t]]
    ]
    text = mm.context(case.question, user_id=user_id).text
    for line in text.splitlines():
        if _line_has(line, case.current) or any(c.lower() in line.lower() for c in current):
            return True
        if any(t.lower() in line.lower() for t in old):
            return False
    return False


# -- modes -------------------------------------------------------------------------------------


@dataclass
class Fake:
    """The fake server of an LLM mode and what answers it."""

    server: FakeOpenAI
    oracle: Oracle | None
    replay: Replay | None

    def requests(self) -> list[dict]:
        return [
            r["json"]
            for r in list(self.server.requests)
            if r["path"].endswith("/chat/completions") and "json" in r
        ]


def _chat(mode: str) -> bool:
    """The mode sends each case's chat message through observe + flush."""
    return "-one" in mode or mode.endswith("-two")


@contextmanager
def _mode(mode: str, replay: Replay | None) -> Iterator[tuple[dict, Fake | None]]:
    embedder = "local" if mode.startswith("local") else "none"
    calls: dict[str, object] = {}
    if _chat(mode):
        calls["llm_turn_calls"] = "one" if "-one" in mode else "two"
        calls["llm_turn_recheck"] = not mode.endswith("-strict")
    if mode in ("offline", "local"):
        yield {"decider": "offline", "embedder": embedder}, None
        return
    oracle = Oracle() if mode.endswith("oracle") else None
    answerer = oracle or replay
    assert answerer is not None, "recorded modes need --answers or --record-requests"
    server = FakeOpenAI(default_reply=answerer.reply).start()
    try:
        settings = fake_llm_settings(server.base_url, embedder) | calls
        yield settings, Fake(server, oracle, None if oracle else replay)
    finally:
        server.stop()


def run_mode(
    mode: str,
    set_name: str,
    personas: dict[str, list[str]],
    cases: list[Case],
    folder: Path,
    replay: Replay | None,
) -> dict:
    started, cpu = time.perf_counter(), time.process_time()
    if replay is not None:
        replay.missing = set()
    path = str(folder / f"{set_name}-{mode}.db")
    judged = []
    with _mode(mode, replay) as (settings, fake):
        config = load_settings(db=path, **settings)
        with MemoryManager(path, settings=config, clock=fixed_clock()) as mm:
            for i, case in enumerate(cases):
                if replay is not None:
                    replay.where = {"set": set_name, "case": case.name, "mode": mode}
                requests = fake.requests if fake else None
                oracle = fake.oracle if fake else None
                user = f"{set_name}-{i}"
                memories = personas[case.persona]
                message = _chat(mode)
                judged.append(run_case(mm, case, memories, user, requests, oracle, message=message))
    report = {
        "wall_s": round(time.perf_counter() - started, 1),
        "cpu_s": round(time.process_time() - cpu, 1),
        "metrics": metrics(judged, llm=fake is not None),
        "cases": [asdict(j) for j in judged],
    }
    if fake is not None and fake.replay is not None:
        report["metrics"]["missing_requests"] = len(fake.replay.missing)
    return report


def metrics(judged: list[Judged], *, llm: bool) -> dict[str, Any]:
    def total(name: str) -> int:
        return sum(getattr(j, name) for j in judged)

    facts = total("facts")
    asked = [j.current_first for j in judged if j.current_first is not None]
    return {
        "cases": len(judged),
        "facts": facts,
        "recall": _rate(total("routed"), total("targets")),
        "recall_2nd": _rate(total("later_routed"), total("later_targets")),
        "stale": _rate(total("stale"), total("targets")),
        "false_updates": _rate(total("false_updates"), total("keeps")),
        "unrelated": total("unrelated"),
        "noop_accuracy": _rate(total("noops_right"), total("noops")),
        "added": _rate(total("adds_apart"), total("adds")),
        "current_first": _rate(sum(asked), len(asked)),
        "parked": total("parked"),
        "calls_per_fact": total("calls") / facts if llm and facts else None,
        "tokens_per_fact": total("prompt_tokens") / facts if llm and facts else None,
        "ops": dict(Counter(op for j in judged for op in j.ops).most_common()),
    }


# -- report ------------------------------------------------------------------------------------

COLUMNS = (
    ("cases", "n"),
    ("recall", "recall"),
    ("recall_2nd", "recall 2nd+"),
    ("stale", "stale"),
    ("false_updates", "false upd."),
    ("unrelated", "unrelated"),
    ("noop_accuracy", "noop acc."),
    ("added", "added"),
    ("current_first", "cur. first"),
    ("parked", "parked"),
    ("calls_per_fact", "calls/fact"),
    ("tokens_per_fact", "tok/fact"),
)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return str(value)
    return f"{value:.0f}" if value >= 10 else f"{value:.2f}"


def table(reports: dict[str, dict[str, dict]]) -> str:
    head = f"{'set/mode':<28}" + "".join(f"{label:>12}" for _, label in COLUMNS)
    lines = [head + f"{'cpu s':>8}{'wall s':>8}"]
    for set_name, modes in reports.items():
        for mode, report in modes.items():
            m = report["metrics"]
            cells = "".join(f"{_cell(m[key]):>12}" for key, _ in COLUMNS)
            lines.append(
                f"{set_name + '/' + mode:<28}{cells}{report['cpu_s']:>8}{report['wall_s']:>8}"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="routing_dev", help="comma-separated set names")
    parser.add_argument("--modes", default="offline,oracle", help="from " + ", ".join(MODES))
    parser.add_argument("--limit", type=int, help="the first N cases of each set")
    parser.add_argument("--json", type=Path, help="write every figure and case here")
    parser.add_argument("--answers", type=Path, help="recorded answers (recorded modes)")
    parser.add_argument("--record-requests", type=Path, help="write unanswered requests here")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each case's misses")
    args = parser.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if unknown := set(modes) - set(MODES):
        parser.error(f"unknown modes {sorted(unknown)}; choose from {', '.join(MODES)}")
    recorded = [m for m in modes if "recorded" in m]
    if recorded and not (args.answers or args.record_requests):
        parser.error(f"{', '.join(recorded)} need --answers or --record-requests")
    replay = None
    if args.answers or args.record_requests:
        answers = load_answers(args.answers) if args.answers else {}
        replay = Replay(answers, record=args.record_requests is not None)
    reports: dict[str, dict[str, dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for set_name in [s.strip() for s in args.sets.split(",") if s.strip()]:
            personas, cases = load_set(set_name)
            cases = cases[: args.limit] if args.limit else cases
            print(f"{set_name}: {len(cases)} cases, {len(personas)} personas", flush=True)
            for mode in modes:
                if mode.startswith("local") and (why := _local_loads()):
                    print(f"{mode}: skipped, the model does not load ({why})")
                    continue
                report = run_mode(mode, set_name, personas, cases, Path(tmp), replay)
                reports.setdefault(set_name, {})[mode] = report
                if args.verbose:
                    for case in report["cases"]:
                        for note in case["notes"]:
                            print(f"  {mode} {case['name']}: {note}")
                print(table({set_name: {mode: report}}).splitlines()[-1], flush=True)
    print(table(reports))
    for set_name, modes_run in reports.items():
        for mode, report in modes_run.items():
            ops = report["metrics"]["ops"]
            print(f"{set_name}/{mode} ops: " + ", ".join(f"{k} {v}" for k, v in ops.items()))
            if (missing := report["metrics"].get("missing_requests")) is not None:
                print(f"{set_name}/{mode}: {missing} requests had no recorded answer")
    if replay is not None and args.record_requests:
        with args.record_requests.open("w", encoding="utf-8") as out:
            for line in replay.recorded.values():
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
        print(f"{len(replay.recorded)} requests written to {args.record_requests}")
    if args.json:
        args.json.write_text(json.dumps(reports, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
