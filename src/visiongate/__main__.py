from visiongate._entry import run

raise SystemExit(run())
