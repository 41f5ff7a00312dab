"""The kernel every floor stands on: the engine, the adapters and the command line import it,
and it imports nothing of visiongate's.

`_errors` is the error every exception derives from, `_display` how untrusted text is shown,
`_suggest` did-you-mean, `_framing` the framed-text conventions, `_platform` what differs
between operating systems, `_lazy` the first-use exports of a package, `_files` how a file
named from outside is read (a regular file, under a cap, never blocking), `_noted` the signals
noted while a command that starts servers loads, `_exit` the exit without teardown, `_digest`
the built-in hashes, and `shapes/` what each API shape is. Importing this package imports none
of them.
"""
