#!/bin/sh
# tests/compat/rping_self.sh: one row of tests/compat_programs.sh.
exec "${top_srcdir:-.}/tests/compat_programs.sh" rping_self
