#!/bin/sh
# tests/compat/fi_pingpong_rdm.sh: one row of tests/compat_programs.sh.
exec "${top_srcdir:-.}/tests/compat_programs.sh" fi_pingpong_rdm
