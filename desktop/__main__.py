import sys

from desktop.app import main

sys.exit(main(sys.argv[1:]))
