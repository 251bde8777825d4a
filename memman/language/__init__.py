"""Reading a fact's text, purely and deterministically: below every stage, storage included.

text.py gives the words, stems, normal form and hash every tier agrees on (the hash is
what storage's unique index holds, so storage needs it too); wording.py how a fact is
worded (fillers, extensions, negation); topic.py what a fact is about (subject, attribute,
value), read by its steps (chatter, speaker, names, negation, patterns, kinds, values,
verbs), and
attributes.py the attribute vocabulary the settings name; roles.py whether two texts with
the same words say the same thing (word order, prepositions, passives).

The rest of memman asks through reader.py: the `Reader` protocol and `READER`, the installed
reader (the offline one: these modules). Phrasings and word lists are data where they have
moved already: rules/*.toml, loaded by rulebook.py, each row with its examples and
look-alikes (tests/test_rule_tables.py).
"""
