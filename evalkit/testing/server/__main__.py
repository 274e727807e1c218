"""``python -m evalkit.testing.server``."""

import sys

from evalkit.testing.server._main import main

sys.exit(main())
