#!/bin/sh
# tests/compat/qperf_rc_lat.sh: one row of tests/compat_programs.sh.
exec "${top_srcdir:-.}/tests/compat_programs.sh" qperf_rc_lat
