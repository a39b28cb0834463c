# tests/hostile.mk: the hostile-peer suite. A raw-socket Python peer
# (tests/hostile/hostile_peer.py) sends protocol violations to a small
# server built on the public API (tests/hostile/hostile_server.c) and checks
# the exact TERMINATE / MPA reaction, then that the server still serves.
check_PROGRAMS += tests/hostile/hostile_server
tests_hostile_hostile_server_SOURCES = tests/hostile/hostile_server.c
tests_hostile_hostile_server_LDADD = libiwarp.la $(PTHREAD_LIBS)
TESTS += tests/hostile.sh
dist_check_SCRIPTS += tests/hostile.sh
EXTRA_DIST += tests/hostile/hostile_peer.py tests/hostile/README.md
