"""English stop words dropped from queries: words that say nothing about which page holds an answer."""

from __future__ import annotations

__all__ = ["ENGLISH_STOP_WORDS"]

# The function words of English: articles, pronouns, auxiliaries, prepositions, conjunctions. Content
# words that are merely common in one kind of document are not here: per-document IDF discounts them.
_WORDS = """
a about above after again against all also am among amongst an and any are as at be because been before
being below between both but by can could d did do does doing down during each few for from further had
has have having he her here hers herself him himself his how i if in into is it its itself just ll m may
many me might more most much must my myself no nor not now of off on once only or other our ours
ourselves out over own per please re s same shall she should so some such t than that the their theirs
them themselves then there these they this those through to too under until up upon ve very via was we
were what when where whether which while who whom why will with within without would y you your yours
yourself yourselves
"""

ENGLISH_STOP_WORDS = frozenset(_WORDS.split())
