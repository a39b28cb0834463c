#!/bin/sh
# tests/compat/mpi_pingpong.sh: one row of tests/compat_programs.sh.
exec "${top_srcdir:-.}/tests/compat_programs.sh" mpi_pingpong
