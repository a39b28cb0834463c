#!/bin/sh
# tests/compat/ib_write_bw.sh: one row of tests/compat_programs.sh.
exec "${top_srcdir:-.}/tests/compat_programs.sh" ib_write_bw
