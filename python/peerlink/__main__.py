"""``python -m peerlink ...`` runs the ``peerlink`` command-line tool the package carries."""

import sys

from ._cli import main

sys.exit(main())
