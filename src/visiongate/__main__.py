from visiongate.cli import main

raise SystemExit(main())
