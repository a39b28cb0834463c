#!/bin/sh
# tests/compat/perftest_iwarp_bw.sh: one row of tests/compat_programs.sh.
exec "${top_srcdir:-.}/tests/compat_programs.sh" perftest_iwarp_bw
