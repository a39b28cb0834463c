# tests/wireshark.mk: Wireshark verification of real loopback runs:
# iwarp_ping and iwarp_bw captured with dumpcap on lo, checked
# with tshark -V and iwarp_decode. Skips (77) where capture is impossible.
TESTS += tests/wireshark_live.sh
dist_check_SCRIPTS += tests/wireshark_live.sh
# RFC 7306 / markers runs decoded by our Lua plugin (wireshark/iwarp.lua)
TESTS += tests/wireshark_ext_live.sh
dist_check_SCRIPTS += tests/wireshark_ext_live.sh
