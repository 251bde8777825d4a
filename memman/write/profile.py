"""What the LLM is shown beyond the router's related memories: the user's profile with a
change the reader cannot place, and retrieval's best whenever a call is made anyway.

Candidates by topic find what a fact supersedes only when the fact's topic is read:
"User just signed a lease in Austin", "I'm a Netflix employee now" and "I haven't lit up since
spring" are read as no attribute, share no word with "User lives in
Denver", "I'm a data analyst at Spotify" or "I smoke about ten cigarettes a day", and were
ADDed as novel with no call, both versions then reaching the prompt (benchmarks/RESULTS.md,
Session 11: profile for changes). An LLM reads them at once, if it is shown the memory.

So with an LLM configured, a fact of the user's that announces a change (language/change.py)
and that the reader files under no named attribute, or under a single-valued one none of the
user's memories holds ("User replaced her computer with a MacBook Air" when the old laptop
was read as no attribute; "User now shares a flat with two friends in Leeds" beside "User
lives in York"), is shown to the decider with the user's single-valued profile (their
newest memory of each of residence, employer, job, relationship status, diet ... at most
top_k), beside whatever its words retrieved. The decider answers UPDATE or DELETE of the
memory it ends, or ADD; a fact saying nothing changed costs no call, as before.

And once a call is paid for, the decider is also shown what retrieval ranked best (BM25 and,
with an embedder, the cosine: up to top_k memories in all), not only those the router found
similar enough to ask about: "Home for me is Brooklyn" is the nearest memory by meaning to
"we're in Philly now, signed the lease" while far below the router's bar. It costs prompt
tokens, never a call (benchmarks/RESULTS.md, Session 12: what a paid call shows).

Offline nothing changes: the offline decider cannot read what the reader could not, and
would only ADD.
"""

from __future__ import annotations

import sqlalchemy as sa

from memman.language.attributes import USER, is_verb_topic
from memman.language.change import says_change
from memman.language.text import content_tokens, jaccard
from memman.models import Memory
from memman.storage.store import Store
from memman.write.candidate import Candidate
from memman.write.retrieval import Retrieved
from memman.write.route import Route, RouteKind


def profile_to_show(
    store: Store,
    conn: sa.Connection,
    candidate: Candidate,
    *,
    single_valued: frozenset[str],
    limit: int,
    topic_held: bool,
) -> list[Memory] | None:
    """The user's newest memory of each single-valued attribute, newest first, at most
    `limit`, when the candidate is a change of the user's the reader files under no named
    attribute, or under a single-valued one no memory holds (`topic_held` False); None when
    it is not (a filed fact finds its memories by topic). One seek of the topic index per attribute
    (0.2 ms CPU for 29 attributes in a 100k scope, where one query over the scope's active
    rows took 23 ms: RESULTS.md, Session 11: the profile by topic seeks); it runs inside the
    write transaction."""
    topic = candidate.topic
    if topic is not None and topic.subject != USER:
        return None
    filed = topic is not None and not is_verb_topic(topic.attribute)
    if filed and (topic_held or topic.attribute not in single_valued):
        return None
    if not says_change(candidate.content):
        return None
    newest = [
        memory
        for attribute in sorted(single_valued)
        for memory in store.active_by_topic(conn, candidate.scope, USER, attribute, 1)
    ]
    newest.sort(key=lambda m: m.observed_at or m.updated_at, reverse=True)
    return newest[:limit]


def with_profile(
    routed: Route, retrieved: list[Retrieved], profile: list[Memory], tokens: frozenset[str]
) -> Route:
    """The route of an unfiled change: AMBIGUOUS, showing the decider what its words
    retrieved about its topic (`retrieved`: write/pertinent.py's, also those too unlike it in
    words for the router to ask about) and the profile. A DUPLICATE stays one; nothing to
    show leaves the route as it is."""
    if routed.kind is RouteKind.DUPLICATE:
        return routed
    if routed.kind is RouteKind.AMBIGUOUS:
        retrieved = routed.related
    shown = {r.memory.id for r in retrieved}
    added = [
        Retrieved(m, bm25=None, jaccard=jaccard(tokens, content_tokens(m.content)))
        for m in profile
        if m.id not in shown
    ]
    if not retrieved and not added:
        return routed
    reason = f"announces a change: {len(retrieved)} memories by words, {len(added)} of the profile"
    return Route(RouteKind.AMBIGUOUS, reason, [*retrieved, *added])


def with_best_retrieved(
    routed: Route, candidate: Candidate, retrieved: list[Retrieved], limit: int
) -> Route:
    """The AMBIGUOUS route of a change, which costs a call, showing also the best of
    `retrieved` (in retrieval's order) up to `limit` memories in all; any other route as it
    is."""
    if routed.kind is not RouteKind.AMBIGUOUS or not says_change(candidate.content):
        return routed
    shown = {r.memory.id for r in routed.related}
    more = [r for r in retrieved if r.memory.id not in shown][: max(0, limit - len(shown))]
    if not more:
        return routed
    reason = f"{routed.reason}; {len(more)} more retrieved"
    return Route(routed.kind, reason, [*routed.related, *more], routed.measure)
