"""``python -m extract_thinker_pageindex``: the same as the ``extract-thinker-pageindex`` command."""

import sys

from .cli import main

sys.exit(main())
