"""``python -m security_verifiers.cli``."""

import sys

from security_verifiers.cli import main

sys.exit(main())
