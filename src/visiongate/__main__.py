import sys

try:
    from visiongate.cli import main
except KeyboardInterrupt:  # Ctrl-C while the command line itself was still loading
    print("visiongate: stopped by SIGINT", file=sys.stderr)
    raise SystemExit(130) from None

raise SystemExit(main())
