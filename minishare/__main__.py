"""``python -m minishare``: see ``minishare.cli``."""
import sys

from minishare.cli import main

if __name__ == "__main__":      # importing the module (as the API reference does) runs nothing
    sys.exit(main())
