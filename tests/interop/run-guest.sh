#!/usr/bin/env bash
# run.sh - boot the siw-peer guest (see build.sh), run one command in it,
# stream the guest console to stdout, power off, exit with the command's status.
#
#   run.sh [options] [--] COMMAND [ARG...]
#
# Guest network: guest eth0 10.0.2.15/24, gw 10.0.2.2, either
#   - QEMU slirp user networking (default): the guest reaches the HOST's
#     127.0.0.1 as 10.0.2.2; host -> guest via hostfwd on 127.0.0.1 only; or
#   - a tap device (-T) that the caller created, with 10.0.2.2/24 on it, in
#     a network namespace of its own (so nothing leaves the machine): host
#     and guest reach each other's real addresses, 10.0.2.2 and 10.0.2.15,
#     which programs that send their own address to the peer need.
#
# Options:
#   -t SEC         kill the guest after SEC seconds (default $SIW_PEER_TIMEOUT or 120)
#   -k "KNOBS"     siw variant, e.g. -k "mpa_crc_required=true" (default
#                  $SIW_PEER_SIW_KNOBS; build it first with build-guest.sh)
#   -i FIFO        the guest console's input (QEMU's stdin) is read from FIFO:
#                  lines written there reach the guest command's stdin
#                  (tests/interop/guest-agent.sh reads its commands so)
#   -p H[:G]       forward tcp 127.0.0.1:H -> guest 10.0.2.15:G (G defaults to H);
#                  repeatable. Without -p: $SIW_PEER_FWD (default "7174 18515").
#                  "-p none" = no forwards (use it when a HOST server owns the port).
#   -w PORT        guest prints "SIW-PEER-LISTENING PORT" once a TCP listener on
#                  PORT exists (e.g. rping -s / ib_write_bw -R server is up)
#   -f FILE[:DEST] copy a host file into the guest (default DEST /root/<name>)
#   -s SCRIPT      run this host shell script in the guest instead of COMMAND
#   -D             siw dynamic debug on + dump the guest dmesg at the end
#   -P FILE        record the guest NIC traffic (guest side of slirp) as pcap
#   -q             quieter guest (no "rdma link show")
#   -T IFNAME      use the tap device IFNAME instead of slirp (no -p)
#   -N             do not install the guest's route guard (by default the guest
#                  can reach only 10.0.2.0/24, i.e. itself and 10.0.2.2 = host
#                  127.0.0.1; everything else, incl. slirp DNS 10.0.2.3, is
#                  "prohibit"ed so slirp never NATs guest traffic to the outside)
#
# Markers on stdout (start of line):
#   SIW-PEER-READY ...          guest RDMA device siw0 is up, command starts now
#   SIW-PEER-LISTENING PORT     (with -w)
#   SIW-PEER-EXIT RC            guest command exit status
#   SIW-PEER-HOST ...           host-side timing / errors from this script
# Exit status: guest command's status; 124 timeout; 99 guest setup failed;
#              125 qemu/run.sh error (e.g. port already in use).
# Environment: LIBIWARP_SIW_PEER_CACHE (default /var/cache/libiwarp-siw-peer),
#   SIW_PEER_TIMEOUT, SIW_PEER_FWD, SIW_PEER_MEM (MiB, 1024), SIW_PEER_SMP (2),
#   SIW_PEER_ACCEL=auto|kvm|tcg (auto: -enable-kvm -cpu host when the CPU
#   shows vmx/svm, else TCG; see README "KVM").
set -euo pipefail
shopt -s lastpipe extglob

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KNOBS=${SIW_PEER_SIW_KNOBS:-} INPUT=""
TIMEOUT=${SIW_PEER_TIMEOUT:-120}
MEM=${SIW_PEER_MEM:-1024}
SMP=${SIW_PEER_SMP:-2}
FWDS=() TAP="" WAIT_PORT="" FILES=() SCRIPT="" DYNDBG=0 PCAP="" QUIET=0 OPEN_NET=0

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$0"; exit "${1:-0}"; }
while getopts "t:k:i:p:w:f:s:DP:qNT:h" o; do
    case $o in
        t) TIMEOUT=$OPTARG;; k) KNOBS=$OPTARG;; i) INPUT=$OPTARG;; p) FWDS+=("$OPTARG");; w) WAIT_PORT=$OPTARG;;
        f) FILES+=("$OPTARG");; s) SCRIPT=$OPTARG;; D) DYNDBG=1;;
        P) PCAP=$OPTARG;; q) QUIET=1;; N) OPEN_NET=1;; T) TAP=$OPTARG;; h) usage 0;; *) usage 125;;
    esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || [ -n "$SCRIPT" ] || usage 125
CACHE=$(SIW_PEER_SIW_KNOBS="$KNOBS" "$HERE/build-guest.sh" --print-dir)
[ -e "$CACHE/vmlinuz" ] && [ -e "$CACHE/initramfs.cpio.gz" ] || { echo "SIW-PEER-HOST error: no guest in $CACHE: run SIW_PEER_SIW_KNOBS=\"$KNOBS\" $HERE/build-guest.sh first" >&2; exit 125; }
# Accelerator: hardware KVM if the CPU has VT-x/AMD-V, else TCG. (A /dev/kvm
# without vmx/svm, e.g. kvm_pvm in a microVM, cannot boot a stock kernel.)
ACCEL=${SIW_PEER_ACCEL:-auto}
if [ "$ACCEL" = auto ]; then
    if [ -w /dev/kvm ] && grep -qsE '^flags.*\b(vmx|svm)\b' /proc/cpuinfo; then ACCEL=kvm; else ACCEL=tcg; fi
fi
case $ACCEL in
    kvm) ACCEL_ARGS=(-enable-kvm -cpu host);;
    tcg) ACCEL_ARGS=(-accel "tcg,thread=multi" -cpu max);;
    *) echo "SIW-PEER-HOST error: SIW_PEER_ACCEL must be auto|kvm|tcg" >&2; exit 125;;
esac
[ ${#FWDS[@]} -gt 0 ] || read -r -a FWDS <<< "${SIW_PEER_FWD:-7174 18515}"

TMP=$(mktemp -d /tmp/siw-peer.XXXXXX)
QPID=""
cleanup() { [ -n "$QPID" ] && kill "$QPID" 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- per-run cpio: /siw-peer/{cmd,env} + extra files, appended to the base
mkdir -p "$TMP/x/siw-peer" "$TMP/x/root"
q() { local s=${1//\'/\'\\\'\'}; printf "'%s'" "$s"; }   # single-quote for sh
if [ -n "$SCRIPT" ]; then
    cp "$SCRIPT" "$TMP/x/siw-peer/cmd"
else
    { for a in "$@"; do q "$a"; printf ' '; done; echo; } > "$TMP/x/siw-peer/cmd"
fi
{
    echo "SIW_PEER_DYNDBG=$DYNDBG"; echo "SIW_PEER_DMESG=$DYNDBG"
    echo "SIW_PEER_QUIET=$QUIET"; echo "SIW_PEER_WAIT_PORT=$WAIT_PORT"; echo "SIW_PEER_OPEN_NET=$OPEN_NET"
} > "$TMP/x/siw-peer/env"
for spec in "${FILES[@]}"; do
    src=${spec%%:*}; dst=${spec#*:}; [ "$dst" = "$spec" ] && dst=/root/$(basename "$src")
    mkdir -p "$TMP/x/$(dirname "$dst")"; cp -p "$src" "$TMP/x/$dst"
done
# The kernel unpacks concatenated archives; an uncompressed one must start
# 4-byte aligned, so pad the gzip'ed base with zeros.
base=$CACHE/initramfs.cpio.gz
pad=$(( (4 - $(stat -c %s "$base") % 4) % 4 ))
{ cat "$base"; head -c "$pad" /dev/zero; (cd "$TMP/x" && find . | cpio -o -H newc --quiet -R 0:0); } > "$TMP/initrd"

# ---- slirp netdev: hostfwd on 127.0.0.1 only, IPv6 off; or the tap
net="user,id=n0,ipv6=off,net=10.0.2.0/24,host=10.0.2.2"
[ -n "$TAP" ] && net="tap,id=n0,ifname=$TAP,script=no,downscript=no,vnet_hdr=off" FWDS=()
for f in "${FWDS[@]}"; do
    [ "$f" = none ] && continue
    h=${f%%:*}; g=${f#*:}
    [[ $h =~ ^[0-9]+$ && $g =~ ^[0-9]+$ ]] || { echo "SIW-PEER-HOST error: bad -p $f" >&2; exit 125; }
    net+=",hostfwd=tcp:127.0.0.1:$h-10.0.2.15:$g"
done
# qboot (minimal firmware) when present: a bit faster than SeaBIOS and no
# screen-clearing escape codes on the console.
BIOS_ARGS=()
[ -e /usr/share/qemu/qboot.rom ] && BIOS_ARGS=(-bios /usr/share/qemu/qboot.rom)
QEMU=(qemu-system-x86_64 "${ACCEL_ARGS[@]}" -smp "$SMP" -m "$MEM" -nographic -no-reboot
      "${BIOS_ARGS[@]}" -kernel "$CACHE/vmlinuz" -initrd "$TMP/initrd"
      -append "console=ttyS0 quiet panic=-1 tsc=reliable"
      -netdev "$net" -device "virtio-net-pci,netdev=n0,romfile=")
[ -n "$PCAP" ] && QEMU+=(-object "filter-dump,id=dump0,netdev=n0,file=$PCAP")

# ---- run; stream console, watch markers
t0=$EPOCHREALTIME
el() { awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.2f", b-a}'; }
rc="" ready=""
echo "SIW-PEER-HOST start: guest=$(basename "$CACHE") accel=$ACCEL timeout=${TIMEOUT}s ${TAP:+tap=$TAP }fwd=[${FWDS[*]}]${PCAP:+ pcap=$PCAP}"
exec 3< <(
    if [ -n "$INPUT" ]; then exec timeout -k 3 "$TIMEOUT" "${QEMU[@]}" 2>&1 <"$INPUT"
    elif [ -t 0 ]; then exec timeout -k 3 "$TIMEOUT" "${QEMU[@]}" 2>&1
    else exec timeout -k 3 "$TIMEOUT" "${QEMU[@]}" 2>&1 </dev/null; fi
)
QPID=$!
while IFS= read -r line <&3 || [ -n "$line" ]; do
    # drop CR and the terminal escapes SeaBIOS/qemu print (ESC c, ESC [ ... x)
    line=${line//$'\r'/}; line=${line//$'\e'c/}; line=${line//$'\e'\[*([0-9;?])[a-zA-Z]/}
    printf '%s\n' "$line"
    case $line in
        SIW-PEER-READY*) ready=$(el); echo "SIW-PEER-HOST ready_after=${ready}s";;
        SIW-PEER-EXIT\ *) rc=${line#SIW-PEER-EXIT }; rc=${rc%% *};;
    esac
done
qrc=0; wait "$QPID" || qrc=$?
QPID=""
if [ -z "$rc" ]; then
    if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
        echo "SIW-PEER-HOST timeout after ${TIMEOUT}s (total $(el)s)"; exit 124
    fi
    echo "SIW-PEER-HOST error: qemu exited $qrc without SIW-PEER-EXIT (total $(el)s)"; exit 125
fi
echo "SIW-PEER-HOST done rc=$rc ready_after=${ready:-?}s total=$(el)s"
exit "$rc"
