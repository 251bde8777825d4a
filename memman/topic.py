"""Placeholder for the topic module: attributes a subject has one value of at a time."""

SINGLE_VALUED = frozenset(
    {
        "name",
        "age",
        "residence",
        "hometown",
        "employer",
        "job",
        "relationship_status",
        "diet",
    }
)
