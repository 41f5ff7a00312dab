"""`visiongate fmt`: one canonical layout for policy and policy test files, comments kept.

`_format` is the entry point (`format_text`, `format_file`); `_tree` makes the changes that
need the document (quoting, `when` style), `_layout` those that need the text (key order,
aligned tables).
"""
