import sys

from app.child.server import main

sys.exit(main())
