"""The sanitizer's bulk paths: the optional C scanner (`_scan`, `_scanner.c`), invisible runs
cut as runs, selectors resolved in one search, and the UTF-8 byte strippers they share. The
walk calls them; they never call the walk."""
