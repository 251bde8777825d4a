"""User text never becomes FTS5 syntax: the MATCH builder's table, and hostile text run for real."""

from __future__ import annotations

import pytest

from memman import InvalidInputError, MemoryManager, Op
from memman.language.text import normalize
from memman.write.retrieval import MAX_QUERY_TERMS, fts_query


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("User prefers flat white", '"prefers" OR "flat" OR "white"'),
        ('say "hello"', '"say" OR "hello"'),
        ("pyth*", '"pyth"'),
        ("cats AND dogs", '"cats" OR "dogs"'),
        ("cats OR dogs NOT fish", '"cats" OR "dogs" OR "not" OR "fish"'),
        ("NEAR(cats dogs, 2)", '"near" OR "cats" OR "dogs" OR "2"'),
        ("well-known -excluded", '"well" OR "known" OR "excluded"'),
        ("content:secret", '"content" OR "secret"'),
        ("^start", '"start"'),
        ("(tea) (coffee)", '"tea" OR "coffee"'),
        ("don't", '"don t"'),  # FTS5 splits at the apostrophe: a phrase of both parts
        ("O’Neill o'neill", '"o neill"'),
        ("O'Neill's rock'n'roll", '"o neill" OR "rock n roll"'),  # a final "s" is dropped
        ("it's Macy's", '"macy"'),
        ("I'm, they're, I've", '"i m" OR "they re" OR "i ve"'),  # led by a stopword: only those
        ("I'm sure I can't", '"sure" OR "can t"'),  # a negation stays a term, as "not" does
        ("it's", '"it"'),
        ("Café CAFÉ café", '"café"'),
        ("東京に住んでいる", '"東京に住んでいる"'),
        ("يعيش في القاهرة", '"يعيش" OR "في" OR "القاهرة"'),
        ("the and of", '"the" OR "and" OR "of"'),  # only stopwords: keep them
        ("'; DROP TABLE long_term; --", '"drop" OR "table" OR "long" OR "term"'),
        ("😀🎉", None),
        ("", None),
        ("   ", None),
        ('"', None),
        ("* - : ^ ( ) \"'", None),
    ],
)
def test_fts_query_table(text, expected):
    assert fts_query(text) == expected


def test_fts_query_caps_long_text():
    paragraph = " ".join(f"word{i}" for i in range(500))
    query = fts_query(paragraph)
    assert query is not None
    assert query.count(" OR ") == MAX_QUERY_TERMS - 1


HOSTILE = [
    '"',
    '""',
    '\'single\' "double" "unbalanced',
    "*",
    "star*",
    "AND",
    "OR",
    "NOT",
    "AND OR NOT",
    "cats AND",
    "NEAR(",
    "NEAR(cats dogs",
    "NEAR/3",
    "-",
    "-cats",
    ":",
    "content:cats",
    "long_term_fts:cats",
    "^",
    "^cats",
    "(",
    ")",
    "((cats)",
    "{content}: cats",
    "😀",
    "😀🎉👍",
    "我喜欢喝咖啡",
    "東京に住んでいる",
    "يحب المستخدم القهوة",
    "the of and a",
    "O'Neill's rock'n'roll don’t",
    "'; DROP TABLE long_term; --",
    "1 OR 1=1",
    "SELECT * FROM long_term WHERE 1",
    "\\x00 \\ \\\\",
    "a" * 300,
    ("The user mentioned that " + 'coffee, NEAR(tea) AND "milk" -sugar: * ') * 120,
]


@pytest.fixture
def mm(tmp_path):
    with MemoryManager(str(tmp_path / "fts.db"), max_fact_chars=20_000) as manager:
        manager.update_many(
            ["User prefers flat white coffee", "User lives in Lisbon", "User is learning Rust"],
            user_id="alice",
        )
        yield manager


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_executes_without_error(mm, text):
    assert isinstance(mm.search(text, user_id="alice", limit=8), list)
    if not normalize(text):  # nothing but punctuation: refused as a fact, never a query error
        with pytest.raises(InvalidInputError, match="no content"):
            mm.update_memory(text, user_id="alice")
        return
    result = mm.update_memory(text, user_id="alice")
    assert result.op in (Op.ADD, Op.NOOP, Op.UPDATE)
    # The stored text is itself searchable without error, and the second write is a NOOP.
    assert mm.search(text, user_id="alice", limit=8) is not None
    assert mm.update_memory(text, user_id="alice").op is Op.NOOP


def test_ten_kilobyte_paragraph(mm):
    paragraph = ("User said the coffee in Lisbon is better than at home, and then more. ") * 150
    assert len(paragraph) > 10_000
    hits = mm.search(paragraph, user_id="alice", limit=3)
    assert {h.content for h in hits} >= {"User prefers flat white coffee", "User lives in Lisbon"}
    assert mm.update_memory(paragraph, user_id="alice").op is Op.ADD


@pytest.mark.parametrize("text", ["", "   ", "😀", "* : ^"])
def test_text_without_terms_finds_nothing(mm, text):
    assert mm.search(text, user_id="alice") == []


def test_empty_fact_is_refused_before_any_query(mm):
    with pytest.raises(InvalidInputError):
        mm.update_memory("", user_id="alice")


def test_stored_non_latin_text_is_found_again(mm):
    mm.update_memory("東京に住んでいる", user_id="alice")
    mm.update_memory("يحب المستخدم القهوة", user_id="alice")
    assert [h.content for h in mm.search("東京に住んでいる", user_id="alice")] == [
        "東京に住んでいる"
    ]
    assert [h.content for h in mm.search("القهوة", user_id="alice")] == ["يحب المستخدم القهوة"]
