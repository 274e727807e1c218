"""``python -m evalkit.testing.server``."""

import sys

from evalkit.testing.server._server import main

sys.exit(main())
