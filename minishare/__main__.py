"""``python -m minishare``: see ``minishare.cli``."""
import sys

from minishare.cli import main

sys.exit(main())
