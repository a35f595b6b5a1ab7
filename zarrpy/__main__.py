"""``python -m zarrpy`` runs the command-line tool."""

import sys

from .tools.cli import main

sys.exit(main())
