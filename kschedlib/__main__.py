"""``python -m kschedlib``."""

import sys

from kschedlib.cli import main

sys.exit(main())
