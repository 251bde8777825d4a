"""Whether a fact announces a change: the one kind of fact that can end another by meaning alone.

"User now calls Austin home" ends "User lives in Denver", "I kicked the smoking habit for
good" ends "I smoke about ten cigarettes a day", and neither shares a word or a topic the
offline reader can name with what it ends. A fact that says nothing changed ("I like
hiking", "I have two dogs") ends nothing. The offline reader asks this cue when a statement
may add to a value rather than replace it (language/beside.py: a student who also works).
With an LLM the write path no longer asks it: every fact is decided with the profile shown
(write/shown.py; issue 27: a vocabulary of change words reached the phrasings it was written
from).
"""

from __future__ import annotations

import re

# Words and phrases that say a state began, ended or differs from before. Verbs are listed
# in the forms chat uses (past and present), matched as whole words; "_" is a space.
_CUES = r"""
now nowadays anymore longer lately recently finally since these_days any_more for_good
after_all used_to no_more again back turns_out turned_out instead
moved move moving relocated relocate packed_up
quit quitting stopped stop gave_up give_up kicked cut_out cutting_out dropped_out
started start starting began begun joined left leaving resigned retired retiring
sold selling bought became become switched switching changed changing converted
graduated transferred accepted took_a took_up landed hired fired laid_off let_me_go
let_go promoted demoted divorced married engaged separated split_up broke_up
seeing_someone dating healed recovered sober unemployed pregnant had_the_baby
lost replaced upgraded traded got_rid gotten_rid in_ages in_years in_months
just new newly got gotten currently today yesterday ago last_week last_month last_year
this_year this_month this_week been
cancelled canceled cancelling cancel ended dropped tapered stepped_down came_off called_off
wrapped_up bumped went_up went_down raised lowered increased decreased reorg
"""
_CUE = re.compile(
    r"\b(?:" + "|".join(cue.replace("_", r"\s+") for cue in _CUES.split()) + r")\b", re.IGNORECASE
)


def says_change(text: str) -> bool:
    """True when the fact's words announce that something began, ended or is different now."""
    return _CUE.search(text.replace("’", "'")) is not None
