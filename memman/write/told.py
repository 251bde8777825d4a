"""Facts that came with their decisions: one LLM call per extraction batch (issue 28).

With `llm_turn_calls = "one"` the extraction call is shown the memories the batch's messages
touch and decides each fact it finds (memman/lifecycle/turn.py). This mixin of WritePath
gives that call what a decision is shown (`shown_for`, the union `_for_reader` builds for one
candidate, here for the user's messages) and applies its answers fact by fact through the
write path's one door (`apply_told`), with the deterministic tiers around them: what they
settle for certain stands whatever the model said (an exact repeat of an active memory, a
near-copy, a restatement the topic tier reads: NOOPs), an answer that failed its checks parks
its fact alone, and a decision on a memory that changed meanwhile is decided again through
the ordinary path (`process`).

The call is shown what the messages touch: the memories of what their sentences are about,
and theirs by words and meaning. A fact, as the model words it, may relate to a memory the
message did not ("Down to about ten layers" / "User keeps about 20 laying hens"). With
`llm_turn_recheck` such a fact, whose own route finds a memory the call never listed, is
decided again on its own (the decision "two" makes), so no memory it may replace goes unseen.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Mapping
from dataclasses import replace

import sqlalchemy as sa

from memman.config import Settings
from memman.language.reader import READER
from memman.models import Memory, UpdateResult
from memman.scope import Scope
from memman.storage.store import Store
from memman.write.apply import StaleDecision
from memman.write.candidate import Candidate
from memman.write.chunkwalk import Also, Embedded
from memman.write.decide import Decided, Decider, Decision, decide_all
from memman.write.meaning import kindred
from memman.write.retrieval import Retrieved

log = logging.getLogger(__name__)


class Told:
    """A mixin of WritePath: the one-call extraction's memories and its decisions applied,
    with WritePath's _embed, _shown, _writer, _apply, _apply_or_park and process."""

    store: Store
    settings: Settings
    clock: Callable[[], dt.datetime]
    decider: Decider

    def shown_for(self, scope: Scope, texts: list[str]) -> list[Retrieved]:
        """The memories a decision about these texts is shown (write/shown.py): first those
        about what each sentence is about (its subject and attribute, and the kindred one),
        then each text's by words and meaning, the rankings interleaved, then the profile; at
        most decision_memories."""
        texts = list(dict.fromkeys(t for t in texts if t.strip()))
        vectors = self._embed(texts)
        with self.store.read() as conn:
            about_it = self._about_sentences(conn, scope, texts)
            return self._shown(conn, scope, list(zip(texts, vectors, strict=True)), about_it)

    def _about_sentences(self, conn: sa.Connection, scope: Scope, texts: list[str]) -> list[Memory]:
        """The memories with the subject and attribute the reader reads in a sentence of the
        texts (or the kindred one): a fact's own route shows them first, so the combined call,
        shown what the messages touch, must too ("I'm down to two dogs" / "User has a beagle")."""
        found: dict[str, Memory] = {}
        for text in texts:
            for sentence in READER.sentences(text):
                topic = READER.about(sentence)
                if topic is None or READER.is_verb_topic(topic.attribute):
                    continue
                for about in ((topic.subject, topic.attribute), kindred(topic)):
                    for memory in self._about(conn, scope, about):
                        found.setdefault(memory.id, memory)
        return list(found.values())

    def apply_told(
        self,
        scope: Scope,
        candidates: list[Candidate],
        decided: list[Decided],
        alsos: Mapping[int, Also] | None = None,
    ) -> list[UpdateResult]:
        """Apply each candidate's decision (or park it with its error), in order, one write
        transaction each; `alsos[i]` runs in the transaction that writes candidate i."""
        alsos = alsos or {}
        vectors = self._embed([c.content for c in candidates])
        return [
            self._apply_one_told(candidate, told, vector, alsos.get(i))
            for i, (candidate, told, vector) in enumerate(
                zip(candidates, decided, vectors, strict=True)
            )
        ]

    def _apply_one_told(
        self, candidate: Candidate, told: Decided, vector: Embedded, also: Also
    ) -> UpdateResult:
        """What the cheap tiers settle for certain (WritePath._settle, told), else the model's
        decision, audited with the scores of the fact's own route for the memories the call
        listed."""
        write = self._writer(also, candidate.scope)
        settled = write(lambda conn: self._settle(conn, candidate, vector=vector, told=True))
        if isinstance(settled, UpdateResult):
            return settled
        shown = told.shown if isinstance(told, Decision) else None
        unseen = settled.near - shown if shown is not None else frozenset()
        if self.settings.llm_turn_recheck and unseen:
            # The call was shown what the messages touch; the fact, as worded, relates to a
            # memory it never listed (a count, a rank, a habit the message words otherwise).
            log.info("%d memories the combined call never showed; deciding alone", len(unseen))
            today = self.clock().date()
            (told,) = decide_all(self.decider, [(candidate, settled.related)], today=today)
        elif shown is not None:  # the audit names what the model saw, not what it never did
            settled = replace(settled, related=[r for r in settled.related if r.memory.id in shown])
        try:
            return self._apply_or_park(candidate, settled, told, vector, None, write)
        except StaleDecision as stale:  # changed since it was shown: decided again, alone
            log.info("memory %s changed since the combined call; deciding again", stale)
            return self.process(candidate, vector=vector, also=also)
