"""MemoryManager's public methods, one module per stage of the flow.

Each module holds a mixin of `memman.api.manager.MemoryManager`: its methods check their
arguments and hand them to the stage's modules (writepath, recall, observe, consolidate,
transfer, maintenance, erase), so the class reads as the API's table of contents.
"""
