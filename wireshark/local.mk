# wireshark/local.mk: the Lua dissector (docs/wireshark.md), installed into
# Wireshark's global Lua plugin folder (configure --with-wireshark-plugindir).
wsplugindir = $(WIRESHARK_PLUGINDIR)
dist_wsplugin_DATA = wireshark/iwarp.lua
EXTRA_DIST += docs/wireshark.md

# The plugin decodes our own captures: synth_capture's, the checked-in
# ones, and ws_plugin_capture's (markers with coalesced and split FPDUs,
# MPA rev 2 P2P, RFC 7306, a corrupted CRC).
if HAVE_CHECK
check_PROGRAMS += tests/ws_plugin_capture
endif
tests_ws_plugin_capture_SOURCES = tests/ws_plugin_capture.c tests/pcap_writer.c tests/pcap_writer.h
tests_ws_plugin_capture_LDADD = libiwarp-core.la
TESTS += tests/wireshark_plugin.sh
dist_check_SCRIPTS += tests/wireshark_plugin.sh
