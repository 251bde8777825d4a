"""A fact is compared only with memories about the same thing (write/pertinent.py): a memory
sharing nothing but a word like "like", "love" or "used" costs no LLM call."""

from __future__ import annotations

import numpy as np

from memman import Op, Tier
from tests.decisions import add_everything, chat_calls, llm_manager


def prompt_of(request: dict) -> str:
    return "\n".join(m["content"] for m in request["json"]["messages"])


def test_a_fact_sharing_only_relation_words_makes_no_call(db, fake_openai):
    fake_openai.default_reply = add_everything
    mm = llm_manager(db, fake_openai.base_url, llm_mode="tools")
    for fact in ["I love animals.", "I used to have a cat named Tom."]:
        mm.update_memory(fact, user_id="u")
    calls = len(chat_calls(fake_openai))
    results = [
        mm.update_memory(fact, user_id="u")
        for fact in ["I'd love to visit New York.", "I used to own a boat."]
    ]
    assert len(chat_calls(fake_openai)) == calls  # no profile, no word but "love", "used"
    assert [(r.op, r.tier) for r in results] == [(Op.ADD, Tier.NOVEL)] * 2


def test_a_fact_sharing_a_topic_word_still_reaches_the_decider(db, fake_openai):
    fake_openai.default_reply = add_everything
    mm = llm_manager(db, fake_openai.base_url, llm_mode="tools")
    for fact in ["I love animals.", "I watch basketball on TV."]:
        mm.update_memory(fact, user_id="u")
    calls = len(chat_calls(fake_openai))
    result = mm.update_memory("I used to love basketball.", user_id="u")
    asked = chat_calls(fake_openai)[calls:]
    assert (result.op, result.tier, len(asked)) == (Op.ADD, Tier.LLM, 1)
    prompt = prompt_of(asked[0])
    assert "I watch basketball on TV." in prompt
    # It shares only "love", yet is shown: a call made anyway shows retrieval's other word
    # matches too, last (write/writepath._for_reader). It costs no call: basketball's
    # memory made this one.
    assert prompt.index("I watch basketball on TV.") < prompt.index("I love animals.")


def test_a_memory_of_the_same_attribute_reaches_the_decider_sharing_no_topic_word(
    db, fake_openai
):
    # Both are (user, pets, dog): "chihuahua" may be Toto, so the decider must see Toto's
    # memory though the two share only "have" and "named".
    fake_openai.default_reply = add_everything
    mm = llm_manager(db, fake_openai.base_url, llm_mode="tools")
    mm.update_memory("I have a dog named Toto.", user_id="u")
    calls = len(chat_calls(fake_openai))
    mm.update_memory("I have a chihuahua named Bob.", user_id="u")
    asked = chat_calls(fake_openai)[calls:]
    assert len(asked) == 1
    assert "I have a dog named Toto." in prompt_of(asked[0])


class AnchoredEmbedder:
    """Vectors with chosen cosines: each text in `near` lies at that cosine from a shared
    anchor direction (so two of them at c1 and c2 have cosine c1 * c2); any other text gets
    a direction of its own (cosine 0 with everything)."""

    name, dim = "anchored", 64

    def __init__(self, near: dict[str, float]) -> None:
        self.near = near
        self.seen: dict[str, int] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in zip(rows, texts, strict=True):
            own = self.seen.setdefault(text, len(self.seen) + 1)
            c = self.near.get(text, 0.0)
            row[0], row[own] = c, (1 - c * c) ** 0.5
        return rows


def embedded_manager(db: str, fake_openai, near: dict[str, float]):
    fake_openai.default_reply = add_everything
    return llm_manager(
        db,
        fake_openai.base_url,
        llm_mode="tools",
        embedder=AnchoredEmbedder(near),
        noop_cosine=0.95,
        novel_cosine=0.5,
    )


def test_with_an_embedder_the_nearest_by_meaning_are_shown_whatever_their_cosine(db, fake_openai):
    # With an LLM the nearest memories by meaning are shown whatever their cosine: a fact
    # sharing no word with the memory it replaces scores low with MiniLM (0.3-0.5).
    for cosine, asked in [(0.3**0.5, 1), (0.6**0.5, 1)]:
        fake_openai.requests.clear()
        path = f"{db}.{cosine}"
        mm = embedded_manager(path, fake_openai, {"I do ballet.": cosine, "I am a dancer.": cosine})
        mm.update_memory("I do ballet.", user_id="u")
        calls = len(chat_calls(fake_openai))
        result = mm.update_memory("I am a dancer.", user_id="u")
        assert len(chat_calls(fake_openai)) - calls == asked
        assert result.op is Op.ADD
        mm.close()


def test_with_an_embedder_another_value_of_the_attribute_is_judged_by_the_cosine(
    db, fake_openai
):
    # Both (user, likes): without an embedder their words tell the values apart, and the
    # topic proposes neither; with one, the nearest by meaning are shown, the nearest first:
    # "I like the snow." at 0.89 before "I like winter." at 0.4.
    near = {"I like rain.": 0.8**0.5, "I like winter.": 0.4 / 0.8**0.5, "I like the snow.": 1.0}
    mm = embedded_manager(db, fake_openai, near)
    mm.update_memory("I like winter.", user_id="u")
    calls = len(chat_calls(fake_openai))
    result = mm.update_memory("I like rain.", user_id="u")
    assert (len(chat_calls(fake_openai)), result.tier) == (calls + 1, Tier.LLM)
    mm.update_memory("I like the snow.", user_id="v")
    mm.update_memory("I like winter.", user_id="v")
    calls = len(chat_calls(fake_openai))
    mm.update_memory("I like rain.", user_id="v")
    asked = chat_calls(fake_openai)[calls:]
    assert len(asked) == 1
    prompt = prompt_of(asked[0])
    # Winter shares only "like" with the fact: retrieval's leftover, shown after the snow.
    assert prompt.index("I like the snow.") < prompt.index("I like winter.")
