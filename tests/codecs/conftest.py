"""Make ``tests.strategies`` importable under a bare ``pytest`` run too.

``python3 -m pytest`` (the README's command) puts the repository root on
``sys.path`` already; the ``pytest`` script does not.
"""

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
