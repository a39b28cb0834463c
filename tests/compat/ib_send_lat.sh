#!/bin/sh
# tests/compat/ib_send_lat.sh: one row of tests/compat_programs.sh.
exec "${top_srcdir:-.}/tests/compat_programs.sh" ib_send_lat
