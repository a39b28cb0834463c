#!/bin/sh
# tests/interop/tap-hosts.sh HOSTS CMD [ARG...]: runs CMD in a mount
# namespace of its own in which /etc/hosts is the file HOSTS (run-matrix.sh,
# group tap: "localhost" is the tap's address for the host's programs).
# Nothing outside CMD sees the change (private mount propagation).
hosts=$1
shift
# shellcheck disable=SC2016 # expanded by the inner sh
exec unshare -m --propagation private \
	sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$hosts" "$@"
