"""Topics for the memories an older reader could not read (`MemoryManager.relabel`).

Every write labels its memory with a topic (the caller's, the LLM's, else `about()`'s), and the
topic is how a newer fact finds the memory it supersedes. The reader learns phrasings from
release to release (language/topic.py READER_VERSION); a memory stored before it could read
"I take the bus to work" keeps no topic, so "I drive to work now" is added beside it. This
reads every active memory without a topic again, batch by batch: each batch is read from one
snapshot, read by `about()` outside any transaction, and labelled in one write transaction that
skips a memory whose text or labels changed meanwhile, so no set label is ever replaced and
other writers wait only for the UPDATEs. A labelled memory gets no audit event: its text and
status are unchanged, as when m018 first labelled the stored memories.
"""

from __future__ import annotations

from dataclasses import dataclass

from memman.language.reader import READER
from memman.scope import Scope
from memman.storage.store import Store


@dataclass(frozen=True)
class RelabelReport:
    """What a relabel did."""

    read: int  # active memories without a topic, read again
    labelled: int  # of those, the ones the reader now gives a topic
    reader_version: str  # the reader that read them (language/reader.Reader.version)
    recorded: bool  # the store now records that version (a whole-store relabel only)


def relabel(store: Store, scope: Scope | None, *, batch: int) -> RelabelReport:
    """Label the scope's (every scope's if None) active memories that have no attribute with
    what the reader reads in them now; a whole-store run then records the reader's version, so
    `memman check` stops asking for one."""
    read = labelled = 0
    after = 0
    while True:
        with store.read() as conn:
            rows = store.unlabelled(conn, scope, after_pk=after, limit=batch)
        if not rows:
            break
        labels = [
            (topic.subject, topic.attribute, pk, digest)
            for pk, content, digest in rows
            if (topic := READER.about(content)) is not None
        ]
        if labels:
            labelled += store.write(
                lambda conn, labels=labels: store.fill_labels(conn, labels), scope=scope
            )
        read += len(rows)
        after = rows[-1][0]
    version = READER.version
    if scope is not None:
        return RelabelReport(read, labelled, version, recorded=False)
    store.write(lambda conn: store.set_reader_version(conn, version))
    return RelabelReport(read, labelled, version, recorded=True)
