"""``python -m evalkit.cli``."""

import sys

from evalkit.cli._main import main

sys.exit(main())
