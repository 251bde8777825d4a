"""`python -m memman`: the same command as the `memman` console script."""

from memman.cli import main

main()
