"""`visiongate audit`: decision traces read back and checked against the policies they name.

Aggregate first, render after: `_inputs` opens files, globs, directories, gzip and stdin as
streams of lines; `_read` decodes lines into records (or says why not); `_aggregate` counts
them into an `AuditResult` (`_result`) without keeping any record (`_parallel`: large files
by several processes, merged into the same result); `_report` renders it and
`_explain` tells one decision in words, found by `_find`. `_policies` says whether the
policy a record names is still the one in force.
"""
