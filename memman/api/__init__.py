"""MemoryManager (manager.py) and its parts, one module per stage of the flow.

manager.py states the public API and hands each call to one part: `writes` (write.py),
`reads` (read.py), `short_term_memory` (short_term.py), `lifecycle` (lifecycle.py) and
`upkeep` (upkeep.py). The parts share one `Core` (core.py) and hand the work to the stage's
modules (writepath, recall, observe, consolidate, transfer, maintenance, erase).
"""
