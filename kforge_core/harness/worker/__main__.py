"""``python -m kforge_core.harness.worker``: a worker process (see :mod:`.worker`)."""

import sys

from .worker import main

sys.exit(main())
