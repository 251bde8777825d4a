"""A number from 1900 to 2099 is a count when it counts the word after it ("2000 followers")
and a year when it dates something ("since 2021"). Every such number was read as a year, so a
recount in that range ("I have 2000 followers" -> "2500 followers") was kept beside the old
count offline, while "1500" -> "2500" replaced it; real years must still not be recounted
("visited Paris in 2019" and "in 2022" are two visits)."""

from __future__ import annotations

import pytest

from tests.decisions import kept_apart, replaced_offline


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I have 2000 followers", "I have 2500 followers"),
        ("I have 1900 fish", "I have 2000 fish"),
        ("I keep 1950 dollars in savings", "I keep 2050 dollars in savings"),
        ("I keep 2000 bees", "I keep 2,500 bees"),
        ("I have 150 followers", "I have 2000 followers"),  # one side in the range
    ],
)
def test_a_count_in_the_range_of_years_is_recounted(db, old, new):
    replaced_offline(db, old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I visited Paris in 2019", "I visited Paris in 2022"),
        ("I have lived in Chicago since 2019", "I have lived in Chicago since 2021"),
        ("I have been vegetarian since 2019", "I have been vegetarian since 2021"),
        ("I work at Google since 2019", "I work at Google since 2021"),
        ("I am in the class of 2012", "I am in the class of 2013"),
        ("I have two kids born in 2015", "I have two kids born in 2016"),
        ("I have a 2015 Honda", "I have a 2018 Honda"),  # a year naming the thing it dates
        ("I love music from the 1980s", "I love music from the 1990s"),
    ],
)
def test_a_year_is_not_a_count(db, old, new):
    kept_apart(db, old, new)
