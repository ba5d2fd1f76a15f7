"""Goal text parsing: the object a spoken or typed instruction asks for.

Read by the episode set-up and by the leaf that takes a revised instruction, neither of which
should need the episode loop to do it.
"""

from __future__ import annotations

import re

_GOAL_VERB = re.compile(
    r"^((could|can|would|will)\s+you\s+)?(please\s+)?"
    r"(grasp|grab|pick\s+up|pick|get|fetch|bring(\s+me)?|take|find|locate|hand\s+me)\s+",
    re.IGNORECASE)
_POLITE_END = re.compile(r"[\s,]+please$", re.IGNORECASE)
_ARTICLE = re.compile(r"^(the|a|an|that|this)\s+", re.IGNORECASE)


def goal_object(goal_text: str) -> str:
    """'Grasp the red mug' -> 'red mug' (the referring expression the perceiver grounds);
    'Could you grab the red mug, please?' -> 'red mug' too."""
    text = goal_text.strip().rstrip(".!?")
    text = _POLITE_END.sub("", _GOAL_VERB.sub("", text))
    text = re.split(r"\s+(and|then)\s+", text, maxsplit=1)[0]
    return _ARTICLE.sub("", text).strip()
