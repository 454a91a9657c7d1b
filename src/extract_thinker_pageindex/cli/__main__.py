"""``python -m extract_thinker_pageindex.cli``: the same as ``python -m extract_thinker_pageindex``."""

import sys

from .commands import main

sys.exit(main())
