#!/bin/bash
# Build the guest image the interop harness boots, into a cache outside the repository:
#   $CACHE/vmlinuz      Debian bookworm kernel (linux-image-6.1.0-*-amd64, from the distro's own package)
#   $CACHE/initrd.img   tiny busybox initramfs: loads virtio/ext4/9p modules, mounts /dev/vda, switch_root
#   $CACHE/rootfs.img   ext4 image of a debootstrap minbase bookworm with rdma-core, ibverbs-utils,
#                       ibverbs-providers, perftest, rdmacm-utils, iproute2, tcpdump, kmod, and
#                       /sbin/interop-init as PID 1 (loads rdma_rxe, creates rxe0 on eth0, runs the
#                       scenario script from the 9p share, powers off)
# Idempotent: each stage is skipped when its output exists and this script has not changed since
# (a content hash, not mtimes, so a fresh clone does not rebuild). FORCE=1 rebuilds everything.
# Needs root (debootstrap, apt-get) and a Debian mirror. Host packages are installed on demand.
#
# env: IBWIRE_INTEROP_CACHE (default /var/tmp/ibwire-interop-cache)  MIRROR (default deb.debian.org)
#      FORCE=1
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
C=${IBWIRE_INTEROP_CACHE:-/var/tmp/ibwire-interop-cache}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
mkdir -p "$C"
[ "${FORCE:-0}" = 1 ] && rm -rf "$C/kpkg" "$C/rootfs" "$C/initrd" "$C/vmlinuz" "$C/kver" "$C/initrd.img" "$C/rootfs.img" "$C"/*.stamp

log() { echo "[build $(date -u +%T)] $*"; }
# The image content depends on this script only; its hash decides whether the image is stale.
STAMP=$(sha256sum "$HERE/build.sh" | cut -c1-16)

# ---- 0. host tools ---------------------------------------------------------
# (tshark and jq: check_points, the two-point verdict, reads the captures and ibdump's JSON with them)
need=()
for p in qemu-system-x86 qemu-utils debootstrap tcpdump iproute2 busybox-static cpio e2fsprogs zstd kmod socat iputils-ping nftables tshark jq; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  log "installing host packages: ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# ---- 1. kernel -------------------------------------------------------------
if [ ! -f "$C/vmlinuz" ]; then
  log "fetching Debian kernel package"
  mkdir -p "$C/kpkg" && cd "$C/kpkg"
  kpkg() { apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'; }
  KPKG=$(kpkg)
  [ -n "$KPKG" ] || { apt-get update -q; KPKG=$(kpkg); }
  [ -n "$KPKG" ] || { echo "build: cannot resolve linux-image-amd64 from the apt sources" >&2; exit 1; }
  ls "$KPKG"_*.deb >/dev/null 2>&1 || apt-get download "$KPKG"
  rm -rf x && mkdir x && dpkg-deb -x "$KPKG"_*.deb x
  cp x/boot/vmlinuz-* "$C/vmlinuz"
  ls x/lib/modules > "$C/kver"
  cd "$HERE"
fi
KV=$(cat "$C/kver")
KM=$C/kpkg/x/lib/modules/$KV/kernel

# Module subset used by the guest (paths relative to .../kernel). crc32_generic is what rxe's ICRC
# needs (without it `rdma link add` fails with ENOENT); sch_netem is for the loss scenarios;
# sch_ingress (clsact), cls_matchall, act_mirred and dummy make the guest a capture point upstream of
# its netem (points=guest: run.sh's point_start).
MODS="
drivers/virtio/virtio.ko drivers/virtio/virtio_ring.ko drivers/virtio/virtio_pci_modern_dev.ko
drivers/virtio/virtio_pci_legacy_dev.ko drivers/virtio/virtio_pci.ko drivers/block/virtio_blk.ko
lib/crc16.ko fs/mbcache.ko fs/jbd2/jbd2.ko crypto/crc32c_generic.ko fs/ext4/ext4.ko
fs/netfs/netfs.ko fs/fscache/fscache.ko net/9p/9pnet.ko net/9p/9pnet_virtio.ko fs/9p/9p.ko
net/core/failover.ko drivers/net/net_failover.ko drivers/net/virtio_net.ko
net/ipv4/udp_tunnel.ko net/ipv6/ip6_udp_tunnel.ko fs/configfs/configfs.ko
drivers/infiniband/core/ib_core.ko drivers/infiniband/core/ib_uverbs.ko drivers/infiniband/core/ib_cm.ko
drivers/infiniband/core/iw_cm.ko drivers/infiniband/core/rdma_cm.ko drivers/infiniband/core/rdma_ucm.ko
drivers/infiniband/core/ib_umad.ko drivers/infiniband/sw/rxe/rdma_rxe.ko
net/sched/sch_netem.ko crypto/crc32_generic.ko arch/x86/crypto/crc32-pclmul.ko
net/sched/sch_ingress.ko net/sched/cls_matchall.ko net/sched/act_mirred.ko drivers/net/dummy.ko
"
# Boot-time (initramfs) load order: virtio_ring before virtio, ext4's dependencies first.
INITRD_ORDER="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk crc16 mbcache jbd2 crc32c_generic ext4 netfs fscache 9pnet 9pnet_virtio 9p"

# ---- 2. rootfs -------------------------------------------------------------
if [ ! -f "$C/rootfs/.debootstrap-done" ]; then
  log "debootstrap minbase bookworm"
  rm -rf "$C/rootfs"
  debootstrap --variant=minbase \
    --include=rdma-core,ibverbs-utils,ibverbs-providers,rdmacm-utils,perftest,iproute2,tcpdump,kmod,procps,iputils-ping,socat \
    bookworm "$C/rootfs" "$MIRROR"
  touch "$C/rootfs/.debootstrap-done"
fi

if [ ! -f "$C/rootfs.img" ] || [ "$(cat "$C/rootfs.stamp" 2>/dev/null)" != "$STAMP" ]; then
  log "installing modules + interop-init into rootfs"
  R=$C/rootfs
  rm -rf "$R/lib/modules" && mkdir -p "$R/lib/modules/$KV/kernel"
  for m in $MODS; do
    install -D -m644 "$KM/$m" "$R/lib/modules/$KV/kernel/$m"
  done
  cp "$C/kpkg/x/lib/modules/$KV"/modules.{order,builtin,builtin.modinfo} "$R/lib/modules/$KV/" 2>/dev/null || true
  depmod -b "$R" "$KV"
  rm -rf "$R"/var/cache/apt/archives/*.deb "$R"/var/lib/apt/lists/* "$R"/usr/share/doc/* "$R"/usr/share/man/* "$R"/usr/share/locale/*
  mkdir -p "$R/lab"
  cat > "$R/sbin/interop-init" <<'EOF'
#!/bin/bash
# PID 1 inside the guest (after switch_root). No systemd, no udev.
# Kernel cmdline: lab.name=a lab.ip=192.168.77.11/24 lab.mtu=1500 lab.timeout=120
# The 9p share (host: the scenario's work directory) is /lab; this guest writes into /lab/$name/.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys  || mount -t sysfs sys /sys
mountpoint -q /dev  || mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm /run /tmp; mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run; mount -t tmpfs tmpfs /tmp
for kv in $(cat /proc/cmdline); do case $kv in lab.*=*) k=${kv%%=*}; k=${k#lab.}; export LAB_${k^^}="${kv#*=}";; esac; done
hostname "rxe-$LAB_NAME"
mountpoint -q /lab || mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=262144 lab /lab
O=/lab/$LAB_NAME; mkdir -p $O
exec > $O/console.log 2>&1
echo "interop-init start uptime=$(cut -d' ' -f1 /proc/uptime)"
ulimit -l unlimited
modprobe crc32_generic; modprobe virtio_net; modprobe rdma_rxe; modprobe rdma_ucm; modprobe ib_uverbs; modprobe ib_umad
ip link set lo up
for i in $(seq 50); do [ -e /sys/class/net/eth0 ] && break; sleep 0.1; done
ip link set eth0 mtu ${LAB_MTU:-1500}
ip addr add $LAB_IP dev eth0
ip link set eth0 up
rdma link add rxe0 type rxe netdev eth0
for i in $(seq 50); do [ -e /sys/class/infiniband/rxe0/ports/1/gids/1 ] && grep -q ffff /sys/class/infiniband/rxe0/ports/1/gids/1 && break; sleep 0.1; done
{ ibv_devinfo -v; rdma link show; echo GIDS:; for g in 0 1 2 3; do echo "$g $(cat /sys/class/infiniband/rxe0/ports/1/gids/$g 2>/dev/null) $(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/$g 2>/dev/null)"; done; } > $O/devinfo.txt 2>&1
echo "ready uptime=$(cut -d' ' -f1 /proc/uptime)"
echo "$(cut -d' ' -f1 /proc/uptime)" > $O/ready
if [ -x /lab/$LAB_NAME.sh ]; then
  ( cd /tmp && timeout ${LAB_TIMEOUT:-120} /lab/$LAB_NAME.sh ) > $O/out.log 2>&1
  echo $? > $O/rc
fi
dmesg > $O/dmesg.txt; echo "done uptime=$(cut -d' ' -f1 /proc/uptime)"
sync
echo o > /proc/sysrq-trigger
sleep 5; poweroff -f
EOF
  chmod 755 "$R/sbin/interop-init"
  log "making ext4 image"
  rm -f "$C/rootfs.img"
  SZ=$(( $(du -sm "$R" | cut -f1) + 160 ))
  mkfs.ext4 -q -F -L interoproot -d "$R" "$C/rootfs.img" "${SZ}M"
  echo "$STAMP" > "$C/rootfs.stamp"
fi

# ---- 3. initramfs ----------------------------------------------------------
if [ ! -f "$C/initrd.img" ] || [ "$(cat "$C/initrd.stamp" 2>/dev/null)" != "$STAMP" ]; then
  log "building initramfs"
  I=$C/initrd; rm -rf "$I"; mkdir -p "$I"/{bin,dev,proc,sys,newroot,mods}
  cp /bin/busybox "$I/bin/busybox"
  for n in $INITRD_ORDER; do
    f=$(find "$C/rootfs/lib/modules/$KV/kernel" -name "$n.ko")
    cp "$f" "$I/mods/"
  done
  cat > "$I/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in $INITRD_ORDER; do insmod /mods/\$m.ko 2>/dev/null; done
for i in \$(seq 100); do [ -b /dev/vda ] && break; sleep 0.05; done
mount -t ext4 /dev/vda /newroot || { echo "cannot mount root"; sh; }
mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=262144 lab /newroot/lab || echo "no 9p share"
mount --move /dev /newroot/dev; mount --move /proc /newroot/proc; mount --move /sys /newroot/sys
exec switch_root /newroot /sbin/interop-init
EOF
  chmod 755 "$I/init"
  (cd "$I" && find . | cpio -o -H newc --quiet | gzip -1) > "$C/initrd.img"
  echo "$STAMP" > "$C/initrd.stamp"
fi
ls -la "$C/vmlinuz" "$C/initrd.img" "$C/rootfs.img"
log "build done ($C)"
