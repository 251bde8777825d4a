"""context() tells the truth when memman could not decide: two statements of one thing both
active ("User lives in Leeds" in March, "User lives in York" in June) are shown together, the
newer first whatever the search ranked higher, the older marked as said earlier, every memory
dated, none dropped, and a budget never cuts the newer while it keeps the older.
Memories are written as an import of old chats would (tests/test_lifecycle_consolidate.py's
loose_import), at the clock's date; a topic label, where a test needs one, by set_columns.
"""

from __future__ import annotations

import datetime as dt

from memman import MemoryManager
from tests.clock import Clock
from tests.test_lifecycle_consolidate import loose_import, set_columns

EARLIER_NOTE = 'An indented "earlier" line was said before the line above it; where they disagree'


def earlier_under(text: str, line: str) -> list[str]:
    """The "earlier" lines indented under `line` (ValueError if the block lacks it)."""
    lines = text.splitlines()
    end = start = lines.index(line) + 1
    while end < len(lines) and lines[end].startswith("  - earlier ("):
        end += 1
    return lines[start:end]


def written_on(db: str, clock: Clock, day: dt.date, facts: list[str]) -> list[str]:
    clock.now = dt.datetime(day.year, day.month, day.day, 10, tzinfo=dt.UTC)
    return loose_import(db, clock, facts)


def test_the_newer_statement_comes_first_though_the_older_matches_better(db, clock):
    """No topic label: the two are related by their words (live) and differ in the value."""
    [leeds] = written_on(db, clock, dt.date(2025, 3, 2), ["User lives in Leeds"])
    [york] = written_on(db, clock, dt.date(2025, 6, 10), ["User lives in York now"])
    written_on(db, clock, dt.date(2025, 6, 20), ["User has a cat called Leeds United"])
    clock.now = dt.datetime(2025, 7, 1, tzinfo=dt.UTC)
    with MemoryManager(db, clock=clock) as mm:
        block = mm.context("does the user live in Leeds?", user_id="u")
    ranked = [h.id for h in block.hits]
    assert ranked[0] == leeds and ranked.index(york) == 2  # the cat ranks between them
    assert earlier_under(block.text, "- User lives in York now (10 June 2025)") == [
        "  - earlier (2 March 2025): User lives in Leeds",
    ]
    cat = "- User has a cat called Leeds United (20 June 2025)"
    assert earlier_under(block.text, cat) == []  # shares only the name: not related
    assert block.text.startswith(EARLIER_NOTE)


def test_a_topic_label_relates_statements_that_share_no_word(db, clock):
    [leeds] = written_on(db, clock, dt.date(2025, 3, 2), ["My sister lives in Leeds"])
    [york] = written_on(db, clock, dt.date(2025, 6, 10), ["My sister moved to York"])
    set_columns(db, [leeds, york], subject="sister", attribute="residence")
    clock.now = dt.datetime(2025, 7, 1, tzinfo=dt.UTC)
    with MemoryManager(db, clock=clock) as mm:
        block = mm.context("does my sister live in Leeds or in York?", user_id="u")
    assert [h.id for h in block.hits] == [leeds, york]
    assert block.text.splitlines()[-2:] == [
        "- My sister moved to York (10 June 2025)",
        "  - earlier (2 March 2025): My sister lives in Leeds",
    ]


def test_statements_the_reader_labels_apart_are_related_by_their_words(db, clock):
    [own] = written_on(db, clock, dt.date(2025, 3, 2), ["I own a motorcycle"])
    [sold] = written_on(db, clock, dt.date(2025, 6, 10), ["I sold my motorcycle"])
    [sister] = written_on(db, clock, dt.date(2025, 6, 20), ["My sister owns a motorcycle"])
    set_columns(db, [own], subject="user", attribute="verb:own")
    set_columns(db, [sold], subject="user", attribute="verb:quit")
    set_columns(db, [sister], subject="sister", attribute="verb:own")  # not the user's
    clock.now = dt.datetime(2025, 7, 1, tzinfo=dt.UTC)
    with MemoryManager(db, clock=clock) as mm:
        block = mm.context("do I own a motorcycle?", user_id="u")
    assert {h.id for h in block.hits} == {own, sold, sister}
    assert earlier_under(block.text, "- I sold my motorcycle (10 June 2025)") == [
        "  - earlier (2 March 2025): I own a motorcycle",
    ]
    assert "- My sister owns a motorcycle (20 June 2025)" in block.text.splitlines()


def test_three_statements_stay_together_among_unrelated_hits_and_none_is_dropped(db, clock):
    jobs = {
        dt.date(2024, 9, 1): "My brother works as a chef in Leeds",
        dt.date(2025, 2, 14): "My brother works as a baker in Leeds",
        dt.date(2025, 8, 30): "My brother works as a teacher",
    }
    ids = [id_ for day, job in jobs.items() for id_ in written_on(db, clock, day, [job])]
    set_columns(db, ids, subject="brother", attribute="job")
    others = written_on(db, clock, dt.date(2025, 5, 1), [
        "User visited Leeds market with their brother",
        "User's brother plays chess on Sundays",
        "User loves baking bread",
    ])  # fmt: skip
    clock.now = dt.datetime(2025, 9, 1, tzinfo=dt.UTC)
    with MemoryManager(db, clock=clock) as mm:
        block = mm.context("brother works chef baker Leeds chess bread", user_id="u")
    assert {h.id for h in block.hits} == {*ids, *others} and block.left_out == 0
    lines = block.text.splitlines()
    assert earlier_under(block.text, "- My brother works as a teacher (30 August 2025)") == [
        "  - earlier (14 February 2025): My brother works as a baker in Leeds",
        "  - earlier (1 September 2024): My brother works as a chef in Leeds",
    ]
    for fact in ["User visited Leeds market with their brother",
                 "User's brother plays chess on Sundays", "User loves baking bread"]:  # fmt: skip
        assert f"- {fact} (1 May 2025)" in lines
    assert sum(line.lstrip().startswith("- ") for line in lines) == 6
    assert sum("earlier" in line for line in lines) == 3  # the note and the two older jobs


def test_statements_of_one_moment_are_none_earlier_than_another(db, clock):
    facts = ["User visited museum number 1 in Lisbon", "User visited museum number 2 in Lisbon"]
    written_on(db, clock, dt.date(2025, 5, 1), facts)
    with MemoryManager(db, clock=clock) as mm:
        block = mm.context("museum Lisbon", user_id="u")
    assert "earlier" not in block.text and len(block.hits) == 2
    for fact in facts:
        assert f"- {fact} (1 May 2025)" in block.text.splitlines()


def test_str_of_a_block_is_its_text(db, clock):
    with MemoryManager(db, clock=clock) as mm:
        mm.update_memory("User plays the cello", user_id="u")
        block = mm.context("cello", user_id="u")
    assert str(block) == block.text and f"{block}" == block.text
    assert repr(block).startswith("ContextBlock(text=")  # the record, for a debugger


def test_a_budget_never_cuts_the_newer_statement_while_it_keeps_the_older(db, clock):
    [leeds] = written_on(db, clock, dt.date(2025, 3, 2), ["My sister lives in Leeds"])
    [york] = written_on(db, clock, dt.date(2025, 6, 10), ["My sister moved to York"])
    set_columns(db, [leeds, york], subject="sister", attribute="residence")
    visits = written_on(db, clock, dt.date(2024, 12, 1), [
        f"My sister visited museum number {i} in Leeds" for i in range(6)
    ])  # fmt: skip
    clock.now = dt.datetime(2025, 7, 1, tzinfo=dt.UTC)
    with MemoryManager(db, clock=clock) as mm:
        everything = mm.context("sister Leeds", user_id="u", max_tokens=2000)
        ranked = [h.id for h in everything.hits]
        assert ranked[0] == leeds and ranked[-1] == york and set(visits) < set(ranked)
        cuts = set()
        for budget in range(40, 200, 10):
            block = mm.context("sister Leeds", user_id="u", max_tokens=budget)
            shown = {h.id for h in block.hits}
            assert leeds not in shown or york in shown, budget
            assert not shown & set(visits) or {leeds, york} <= shown, budget  # group first
            assert block.approx_tokens <= budget and block.left_out == 8 - len(shown)
            cuts.add(len(shown))
    assert {1, 2, 3} < cuts  # York alone, then Leeds under it, then a visit
