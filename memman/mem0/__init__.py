"""mem0's `Memory` and `AsyncMemory` on top of memman: a one-line switch for mem0 code.

`from memman.mem0 import Memory` is the documented import; the classes live in
memory.py and aio.py, short-term facts' part in short_term.py, mem0's config dialect in
config.py and its result shapes in shapes.py.
"""

from memman.mem0.aio import AsyncMemory
from memman.mem0.memory import Memory

__all__ = ["AsyncMemory", "Memory"]
