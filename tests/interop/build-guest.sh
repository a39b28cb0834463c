#!/usr/bin/env bash
# tests/interop/build-guest.sh - build (or reuse from the cache) the tiny QEMU
# guest that runs the Linux soft-iWARP (siw) driver plus rdma-core tools
# (rping, perftest): the real iWARP peer of libiwarp's interop matrix.
# tests/interop/README.md describes the guest and its cache.
#
#   build-guest.sh            default siw
#   SIW_PEER_SIW_KNOBS="mpa_crc_required=true" build-guest.sh   a variant
#   build-guest.sh --print-dir   only print the variant's guest directory
#
# Cache (outside the repository): $LIBIWARP_SIW_PEER_CACHE, default
# /var/cache/libiwarp-siw-peer:
#   debs/                   downloaded .debs (shared by all variants)
#   work/kernel, work/full  extracted kernel / user space (shared)
#   work/siw-<tag>/         siw.ko built for one knob set (stamp file)
#   guest-<tag>/            vmlinuz, initramfs.cpio.gz, build-info.txt, .stamp
# <tag> is "default" or the sorted knobs, e.g. "mpa_crc_required-true".
# A guest directory whose .stamp matches (hash of this script, guest-init.sh,
# the knobs and the extra packages) is reused as is: no apt, no root needed.
# LIBIWARP_SIW_PEER_REBUILD=1 (or SIW_PEER_REBUILD=1) rebuilds from scratch
# (new Debian kernel, refreshed packages; the .debs stay cached).
#
# Debian 12's kernel is built with "# CONFIG_RDMA_SIW is not set", so siw.ko
# is compiled here out of tree from Debian's own linux-source-6.1 package
# (same version as the kernel image) against linux-headers-<kver>.
# Needs root for apt-get (only when packages are missing) and chroot.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${LIBIWARP_SIW_PEER_CACHE:-${SIW_PEER_CACHE:-/var/cache/libiwarp-siw-peer}}
DEBS=$CACHE/debs          # downloaded .deb files
WORK=$CACHE/work          # extraction / build area
FULL=$WORK/full           # all user-space .debs extracted here (lib lookup)
ROOT=$WORK/initramfs      # staged initramfs tree
# Extra Debian packages whose binaries go into the guest (space separated).
EXTRA_PKGS=${SIW_PEER_EXTRA_PKGS:-tcpdump qperf libfabric-bin}
# siw's settings are compile-time constants in siw_main.c (6.1), e.g.
# SIW_PEER_SIW_KNOBS="mpa_crc_required=true peer_to_peer=true mpa_version=1"
# (also: mpa_crc_strict try_gso siw_tcp_nagle zcopy_tx loopback_enabled).
# Each knob set is its own variant with its own siw.ko and guest directory.
SIW_KNOBS=$(printf '%s\n' ${SIW_PEER_SIW_KNOBS:-} | sort -u | tr '\n' ' ' | sed 's/ $//')
TAG=default
[ -n "$SIW_KNOBS" ] && TAG=$(printf '%s' "$SIW_KNOBS" | tr ' =' '_-' | tr -cd 'A-Za-z0-9_.-')
OUT=$CACHE/guest-$TAG     # vmlinuz, initramfs.cpio.gz, build-info.txt, .stamp
SIW_BUILD=$WORK/siw-$TAG  # out-of-tree siw.ko of this variant

log() { printf '[build %3ss] %s\n' "$SECONDS" "$*" >&2; }
die() { printf '[build] ERROR: %s\n' "$*" >&2; exit 1; }

[ "${1:-}" = --print-dir ] && { echo "$OUT"; exit 0; }
REBUILD=${LIBIWARP_SIW_PEER_REBUILD:-${SIW_PEER_REBUILD:-0}}
# Everything that shapes the guest, except the Debian package versions
# (those are refreshed by a rebuild).
STAMP=$(cat "$0" "$HERE/guest-init.sh" | sha256sum | cut -c1-16)" knobs=[$SIW_KNOBS] extra=[$EXTRA_PKGS]"
if [ "$REBUILD" != 1 ] && [ -e "$OUT/vmlinuz" ] && [ -e "$OUT/initramfs.cpio.gz" ] &&
   [ "$(cat "$OUT/.stamp" 2>/dev/null)" = "$STAMP" ]; then
    log "cached: $OUT ($TAG)"
    exit 0
fi

[ "$(id -u)" = 0 ] || die "run as root (needs apt-get)"
mkdir -p "$CACHE"
# One build at a time (the shared work dirs); a second caller waits.
exec 9>"$CACHE/.lock"
flock 9
[ "$REBUILD" = 1 ] && rm -rf "$WORK"
mkdir -p "$DEBS" "$WORK" "$OUT"
log "building guest variant '$TAG' (knobs: ${SIW_KNOBS:-defaults}) into $OUT"

# ---------------------------------------------------------------- host tools
apt_updated=0
apt_update_once() { [ $apt_updated = 1 ] || { log "apt-get update"; apt-get update -qq; apt_updated=1; }; }
# No candidate for linux-image-amd64 means the package lists are missing.
case $(apt-cache policy linux-image-amd64 2>/dev/null) in *"Candidate: "[0-9]*) ;; *) apt_update_once;; esac

need_pkgs() {   # install Debian packages that are not installed yet
    local missing=() p
    for p in "$@"; do
        [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
    done
    [ ${#missing[@]} = 0 ] && return 0
    apt_update_once
    log "apt-get install ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
need_pkgs qemu-system-x86 cpio kmod binutils xz-utils gzip gcc make python3

# ------------------------------------------------------------ kernel choice
# The linux-image-amd64 metapackage names the current ABI, e.g.
# linux-image-6.1.0-57-amd64; SIW_PEER_KPKG overrides it.
KPKG=${SIW_PEER_KPKG:-$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ && !n++ {print $2}')}
[ -n "$KPKG" ] || die "cannot determine the kernel package from linux-image-amd64"
KVER=${KPKG#linux-image-}                                   # 6.1.0-57-amd64
KDEBVER=$(apt-cache policy "$KPKG" | awk '/Candidate:/{print $2}')   # 6.1.192-3
KSERIES=$(echo "$KVER" | cut -d. -f1,2)                     # 6.1
log "kernel: $KPKG $KDEBVER (uname -r $KVER)"

download() {    # download <pkg>[=<ver>] into $DEBS unless already there; 1 = failed
    local spec=$1 name=${1%%=*} glob
    glob="$DEBS/${name}_*.deb"
    [[ $spec == *=* ]] && glob="$DEBS/${name}_${spec#*=}_*.deb" && glob=${glob//:/%3a}
    compgen -G "$glob" >/dev/null && return 0
    log "apt-get download $spec"
    (cd "$DEBS" && apt-get download -qq "$spec" 2>&1 | grep -v 'unsandboxed' >&2 || true)
    compgen -G "$glob" >/dev/null
}
debfile() { ls -t "$DEBS/${1}"_*.deb | head -n1; }

# ------------------------------------------------------------ kernel image
download "$KPKG=$KDEBVER" || die "apt-get download $KPKG=$KDEBVER failed"
KDIR=$WORK/kernel
if [ ! -e "$KDIR/boot/vmlinuz-$KVER" ]; then
    rm -rf "$KDIR"; dpkg -x "$(debfile "$KPKG")" "$KDIR"
fi
# Debian 6.1 kernels have no siw; if a future kernel ships it, use that one.
if grep -q '^CONFIG_RDMA_SIW=[my]' "$KDIR/boot/config-$KVER"; then
    log "kernel ships siw itself; no out-of-tree build needed"
    SIW_KO=""
else
    log "kernel config: $(grep 'CONFIG_RDMA_SIW' "$KDIR/boot/config-$KVER") -> building siw.ko out of tree"
    SIW_KO=$SIW_BUILD/siw.ko
fi

# ------------------------------------------------------ siw.ko (out of tree)
# Rebuilt when missing or when the kernel or the knobs changed (stamp file).
SIW_STAMP="$KPKG $KDEBVER knobs: $SIW_KNOBS"
if [ -n "$SIW_KO" ] && { [ ! -e "$SIW_KO" ] || [ "$(cat "$SIW_BUILD/.stamp" 2>/dev/null)" != "$SIW_STAMP" ]; }; then
    need_pkgs "linux-headers-$KVER"
    # linux-source-<series> of the same Debian version; fall back to candidate.
    download "linux-source-$KSERIES=$KDEBVER" || download "linux-source-$KSERIES" \
        || die "apt-get download linux-source-$KSERIES failed"
    SRCDEB=$(debfile "linux-source-$KSERIES")
    rm -rf "$WORK/siw-src" "$SIW_BUILD"; mkdir -p "$WORK/siw-src"
    log "extracting drivers/infiniband/sw/siw from $(basename "$SRCDEB")"
    dpkg-deb --fsys-tarfile "$SRCDEB" \
        | tar -xO "./usr/src/linux-source-$KSERIES.tar.xz" \
        | tar -xJ -C "$WORK/siw-src" "linux-source-$KSERIES/drivers/infiniband/sw/siw"
    cp -r "$WORK/siw-src/linux-source-$KSERIES/drivers/infiniband/sw/siw" "$SIW_BUILD"
    for kv in $SIW_KNOBS; do     # e.g. "const bool mpa_crc_required;" -> "... = true;"
        k=${kv%%=*}; v=${kv#*=}
        sed -E -i "s/^((const )?(bool|u_char) $k)( = [^;]*)?;/\1 = $v;/" "$SIW_BUILD/siw_main.c"
        grep -Eq "^(const )?(bool|u_char) $k = $v;" "$SIW_BUILD/siw_main.c" || die "unknown siw knob: $kv"
        log "siw knob: $(grep -E "^(const )?(bool|u_char) $k = " "$SIW_BUILD/siw_main.c")"
    done
    log "make -C /usr/src/linux-headers-$KVER M=$SIW_BUILD CONFIG_RDMA_SIW=m"
    make -s -C "/usr/src/linux-headers-$KVER" M="$SIW_BUILD" CONFIG_RDMA_SIW=m -j"$(nproc)" modules >&2
    strip --strip-debug "$SIW_KO"
    echo "$SIW_STAMP" > "$SIW_BUILD/.stamp"
    rm -rf "$WORK/siw-src"
    modinfo "$SIW_KO" | grep -E '^(vermagic|depends)' >&2
fi

# ------------------------------------------------------------ user space
# Top-level packages; their shared-library dependencies are added below.
# nftables: the agent's port hold (guest-agent.sh HOLD, README "Re-runs").
TOP_PKGS="busybox-static rdma-core ibverbs-providers libibverbs1 librdmacm1 rdmacm-utils perftest ibverbs-utils iproute2 nftables libgcc-s1 $EXTRA_PKGS"
# Libraries loaded with dlopen() (not in NEEDED): glibc needs libgcc_s for
# pthread_exit/cancel unwinding (rping threads abort without it).
DLOPEN_SONAMES="libgcc_s.so.1"
# Executables taken from those packages (ELF files under */bin, */sbin).
BIN_PKGS="rdmacm-utils perftest ibverbs-utils nftables $EXTRA_PKGS"
IPROUTE_BINS="rdma ip ss"

declare -A HAVE=()
extract_pkg() { # download + extract one package into $FULL (once)
    local p=$1
    [ -n "${HAVE[$p]:-}" ] && return 0
    download "$p" || die "apt-get download $p failed"
    dpkg -x "$(debfile "$p")" "$FULL"; HAVE[$p]=1
}
rm -rf "$FULL"; mkdir -p "$FULL"
for p in $TOP_PKGS; do extract_pkg "$p"; done

# Where a soname lives inside $FULL (first hit wins).
LIBDIRS="usr/lib/x86_64-linux-gnu lib/x86_64-linux-gnu usr/lib64 lib64 usr/lib lib"
# A library that Debian installs through update-alternatives (e.g.
# libpsm-infinipath1, needed by libfabric1: /usr/lib/libpsm1/
# libpsm_infinipath.so.1.16) has no soname link after dpkg -x: the file
# whose SONAME it is serves.
find_lib() {
    local d f
    for d in $LIBDIRS; do [ -e "$FULL/$d/$1" ] && { echo "$FULL/$d/$1"; return 0; }; done
    while read -r f; do
        readelf -d "$f" 2>/dev/null | grep -F "(SONAME)" | grep -F "[$1]" >/dev/null && { echo "$f"; return 0; }
    done < <(find "$FULL" -type f -name "$1.*" 2>/dev/null)
    return 1
}
needed() { readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
is_elf() { [ -f "$1" ] && [ "$(head -c4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

# Guest executables (paths relative to $FULL) and dlopen()ed provider.
SEL=()
for p in $BIN_PKGS; do
    while read -r f; do
        f=${f#./}
        case $f in bin/*|sbin/*|usr/bin/*|usr/sbin/*) is_elf "$FULL/$f" && SEL+=("$f");; esac
    done < <(dpkg-deb -c "$(debfile "$p")" | awk '$1 ~ /^-/ {print $6}')
done
for b in $IPROUTE_BINS; do
    for d in usr/bin bin sbin usr/sbin; do [ -f "$FULL/$d/$b" ] && { SEL+=("$d/$b"); break; }; done
done
PROVIDER=$(cd "$FULL" && ls usr/lib/x86_64-linux-gnu/libibverbs/libsiw-rdmav*.so)
SEL+=("$PROVIDER")

# Closure over NEEDED sonames. A missing soname pulls in the lib* Depends of
# the packages fetched so far (Debian's shlibs Depends name the library
# packages), repeated until everything resolves.
declare -A LIBS=(); MISSING=()
resolve() {      # fills LIBS[soname]=path and MISSING=(sonames not found)
    local queue=() f s path
    local -A miss=()
    LIBS=()
    for f in "${SEL[@]}"; do queue+=("$FULL/$f"); done
    for s in $DLOPEN_SONAMES; do
        if path=$(find_lib "$s"); then LIBS[$s]=$path; queue+=("$path"); else miss[$s]=1; fi
    done
    while [ ${#queue[@]} -gt 0 ]; do
        f=${queue[0]}; queue=("${queue[@]:1}")
        for s in $(needed "$f"); do
            [ -n "${LIBS[$s]:-}" ] && continue
            if path=$(find_lib "$s"); then LIBS[$s]=$path; queue+=("$path"); else miss[$s]=1; fi
        done
    done
    MISSING=("${!miss[@]}")
}
declare -A QUERIED=()
for round in 1 2 3 4 5 6 7 8 9; do
    resolve
    [ ${#MISSING[@]} = 0 ] && break
    log "round $round: unresolved sonames: ${MISSING[*]}"
    # lib* Depends of the packages not queried yet (one apt-cache call)
    new=()
    for p in "${!HAVE[@]}"; do [ -n "${QUERIED[$p]:-}" ] || { new+=("$p"); QUERIED[$p]=1; }; done
    added=0
    for p in $(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
                   --no-replaces --no-enhances "${new[@]}" 2>/dev/null \
               | awk '/^  (Pre)?Depends: (lib|zlib)/ {print $2}' | sort -u); do
        [ -n "${HAVE[$p]:-}" ] && continue
        extract_pkg "$p"; added=1
    done
    [ $added = 1 ] || die "cannot resolve: ${MISSING[*]}"
done
[ ${#MISSING[@]} = 0 ] || die "unresolved sonames: ${MISSING[*]}"
log "user space: ${#SEL[@]} files, ${#LIBS[@]} shared libraries, packages: $(echo "${!HAVE[@]}" | tr ' ' '\n' | sort | tr '\n' ' ')"

# ------------------------------------------------------------ stage rootfs
rm -rf "$ROOT"
mkdir -p "$ROOT"/{usr/bin,usr/sbin,usr/lib/x86_64-linux-gnu,usr/lib64,etc/libibverbs.d,etc/siw-peer,proc,sys,dev,tmp,root,run,var,mnt}
ln -s usr/bin "$ROOT/bin"; ln -s usr/sbin "$ROOT/sbin"; ln -s usr/lib "$ROOT/lib"; ln -s usr/lib64 "$ROOT/lib64"
chmod 1777 "$ROOT/tmp"

# busybox + applet links (never shadow a real binary)
cp "$FULL/bin/busybox" "$ROOT/usr/bin/busybox"
for a in $("$ROOT/usr/bin/busybox" --list); do
    [ -e "$ROOT/usr/bin/$a" ] || ln -s busybox "$ROOT/usr/bin/$a"
done
# selected executables (merged-/usr layout) and the verbs provider
DSTS=()
for f in "${SEL[@]}"; do
    case $f in
        bin/*|usr/bin/*)   dst=usr/bin/$(basename "$f");;
        sbin/*|usr/sbin/*) dst=usr/sbin/$(basename "$f");;
        *)                 dst=$f;;
    esac
    mkdir -p "$ROOT/$(dirname "$dst")"
    rm -f "$ROOT/$dst"; cp -L "$FULL/$f" "$ROOT/$dst"; DSTS+=("$dst")
done
cp "$FULL"/etc/libibverbs.d/siw.driver "$ROOT/etc/libibverbs.d/"
# shared libraries, stored under their soname
for s in "${!LIBS[@]}"; do cp -L "${LIBS[$s]}" "$ROOT/usr/lib/x86_64-linux-gnu/$s"; done
ln -sf ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$ROOT/usr/lib64/ld-linux-x86-64.so.2"
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$ROOT/etc/passwd"
printf 'root:x:0:\n' > "$ROOT/etc/group"
printf '127.0.0.1 localhost\n10.0.2.15 guest\n10.0.2.2 host\n' > "$ROOT/etc/hosts"
# "ldd" inside the staged root (its own ld.so): everything must resolve.
for dst in "${DSTS[@]}"; do
    if chroot "$ROOT" /lib64/ld-linux-x86-64.so.2 --list "/$dst" | grep 'not found'; then
        die "ldd in staged root: /$dst has unresolved libraries"
    fi
done
log "ldd check in staged root: OK"

# ------------------------------------------------------------ kernel modules
# Load order from modprobe --show-depends (kmod) on the depmod'ed extracted
# kernel package (+ updates/siw.ko); modules are copied uncompressed so
# busybox insmod can load them. nft_socket (with nf_tables): the agent's
# port hold, which asks whether a listening socket would take a SYN.
MODS="virtio_pci virtio_net siw rdma_ucm ib_uverbs nft_socket"
MSTAGE=$KDIR    # the extracted kernel package; siw.ko goes to updates/
if [ -n "$SIW_KO" ]; then
    mkdir -p "$MSTAGE/lib/modules/$KVER/updates"; cp "$SIW_KO" "$MSTAGE/lib/modules/$KVER/updates/siw.ko"
fi
depmod -b "$MSTAGE" "$KVER"
: > "$ROOT/etc/siw-peer/modules.load"
for m in $MODS; do
    modprobe -d "$MSTAGE" -S "$KVER" --show-depends "$m" | awk '$1=="insmod"{print $2}'
done | awk '!seen[$0]++' | while read -r path; do
    rel=${path#"$MSTAGE"/lib/modules/"$KVER"/}
    out=${rel%.xz}; out=${out%.zst}; out=${out%.gz}
    mkdir -p "$ROOT/lib/modules/$KVER/$(dirname "$out")"
    case $path in
        *.xz)  xz -dc "$path" > "$ROOT/lib/modules/$KVER/$out";;
        *.zst) zstd -qdc "$path" > "$ROOT/lib/modules/$KVER/$out";;
        *.gz)  gzip -dc "$path" > "$ROOT/lib/modules/$KVER/$out";;
        *)     cp "$path" "$ROOT/lib/modules/$KVER/$out";;
    esac
    echo "$out" >> "$ROOT/etc/siw-peer/modules.load"
done
cp "$KDIR/lib/modules/$KVER"/modules.{order,builtin,builtin.modinfo} "$ROOT/lib/modules/$KVER/" 2>/dev/null || true
depmod -b "$ROOT" "$KVER"   # so busybox modprobe/modinfo work inside the guest
log "modules: $(tr '\n' ' ' < "$ROOT/etc/siw-peer/modules.load")"

# ------------------------------------------------------------ init + pack
install -m 0755 "$HERE/guest-init.sh" "$ROOT/init"
echo "$KVER" > "$ROOT/etc/siw-peer/kver"
( cd "$ROOT" && find . -print0 | sort -z | cpio --null -o -H newc --quiet -R 0:0 ) \
    | gzip -6 > "$OUT/initramfs.cpio.gz.tmp"
mv "$OUT/initramfs.cpio.gz.tmp" "$OUT/initramfs.cpio.gz"
cp "$KDIR/boot/vmlinuz-$KVER" "$OUT/vmlinuz"
{
    echo "kernel_package=$KPKG $KDEBVER"
    echo "uname_r=$KVER"
    echo "siw=${SIW_KO:+out-of-tree from linux-source-$KSERIES $(basename "$(debfile "linux-source-$KSERIES")")}"
    echo "siw_knobs=${SIW_KNOBS:-(defaults)}"
    echo "modules=$(tr '\n' ' ' < "$ROOT/etc/siw-peer/modules.load")"
    for p in $(echo "${!HAVE[@]}" | tr ' ' '\n' | sort); do echo "deb=$(basename "$(debfile "$p")")"; done
    echo "initramfs_bytes=$(stat -c %s "$OUT/initramfs.cpio.gz")"
} > "$OUT/build-info.txt"
echo "$STAMP" > "$OUT/.stamp"
log "done: $OUT/vmlinuz $OUT/initramfs.cpio.gz ($(du -h "$OUT/initramfs.cpio.gz" | cut -f1))"
