"""Storage behind one door (issue 15): design note. (Placeholder, written in full below.)"""
