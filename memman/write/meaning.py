"""The attribute a fact is about by meaning, for facts the extractor reads no attribute of.

"User bought a Tesla Model 3" shares no word with "User drives a Honda Civic" and the
extractor (memman/language/topic.py) gives it only a verb topic, yet it is about the car. With an
embedder whose prototypes were calibrated (benchmarks/calibrate_attributes.py: the mean
vector of the MSC persona facts the extractor labels with each attribute), the fact's nearest
prototype names the attribute when it leads the second nearest by the calibrated margin.

It only widens what the decider is shown: the user's memories of that attribute join the
candidates. It never settles a fact (the prototypes are right about 99 % of the time on the
extractor's own labels, and give an attribute to about a quarter of the facts it reads none
of, some of them wrongly), so a wrong match costs a longer prompt, not a fact.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

import numpy as np

from memman.language.reader import READER, USER, Topic

PROTOTYPES = "data/attribute_prototypes.npz"


@dataclass(frozen=True)
class Prototypes:
    model: str
    attributes: tuple[str, ...]
    matrix: np.ndarray  # one unit row per attribute
    margin: float  # the lead over the second nearest a match needs
    floor: float  # the cosine below which a fact is about none of them

    def nearest(self, vector: np.ndarray) -> str | None:
        """The attribute the (unit) vector is about, or None when no prototype leads."""
        scores = self.matrix @ np.asarray(vector, dtype=np.float32)
        second, best = np.argsort(scores)[-2:]
        if scores[best] < self.floor or scores[best] - scores[second] < self.margin:
            return None
        return self.attributes[int(best)]


@functools.cache
def prototypes(model: str) -> Prototypes | None:
    """The calibrated prototypes of this embedding model; None for a model without them."""
    with resources.files("memman").joinpath(PROTOTYPES).open("rb") as file:
        data = np.load(file)
        if str(data["model"]) != model:
            return None
        return Prototypes(
            model=model,
            attributes=tuple(str(a) for a in data["attributes"]),
            matrix=data["prototypes"].astype(np.float32),
            margin=float(data["margin"]),
            floor=float(data["floor"]),
        )


def kindred(topic: Topic | None) -> tuple[str, str] | None:
    """(subject, attribute) of the other side of a fact with two ("retired" ends an employer
    and a job, attributes.KINDRED): its memories are shown to the decider, as by meaning."""
    other = READER.kindred(topic.attribute) if topic is not None else None
    return None if other is None else (topic.subject, other)


def topic_by_meaning(
    topic: Topic | None, vector: np.ndarray, model: str
) -> tuple[str, str] | None:
    """(subject, attribute) of a fact the extractor gave no attribute (none, or only a verb
    topic), from its vector's nearest prototype; None when its topic is known or none leads."""
    if topic is not None and not READER.is_verb_topic(topic.attribute):
        return None
    found = prototypes(model)
    attribute = found.nearest(vector) if found is not None else None
    if attribute is None:
        return None
    return (USER if topic is None else topic.subject), attribute
