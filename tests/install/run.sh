#!/bin/sh
# The install test (.ci/run, after make check; slow, so make check does
# not run it). In a fresh Debian 12 chroot made by debootstrap, with only
# make and git in it:
#   1. scripts/install-deps (the default profile) adds no service;
#   2. make install; the daemon started as the installed unit's ExecStart
#      says (no systemctl) sends READY=1, writes its pidfile, runs a skill
#      through skillctl, and stops cleanly; man -l renders every page;
#   3. make uninstall leaves only what docs/install.md says it leaves;
#   4. the .deb, built on the host (dpkg-buildpackage -us -uc -b, then
#      lintian), installs with apt, starts the same way, runs a skill, and
#      dpkg --purge leaves nothing but the role users.
# Prints "ok - install: STEP" per step, "skip - install: why" when this
# host cannot run it (no root, no debootstrap, no network), the time of
# each step, and exits 1 on the first failure.
#
#   SB_MIRROR   the Debian mirror (default http://deb.debian.org/debian)
#   KEEP_TMP=1  keep the work dir (the chroot, the logs)
#
# The debootstrap tarball and apt's downloads are cached under
# build/install-cache, so a second run fetches nothing.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MIRROR=${SB_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
CACHE=$ROOT/build/install-cache
T0=$(date +%s)
TSTEP=$T0
W=""
CH=""
MOUNTS=""
DPID=""
NPID=""

skip() {
	echo "skip - install: $*"
	exit 0
}
fail() {
	echo "not ok - install: $*"
	[ -z "$W" ] || [ ! -s "$W/step.log" ] || sed 's/^/#   /' "$W/step.log" | tail -n 40
	exit 1
}
ok() {
	now=$(date +%s)
	echo "ok - install: $* ($((now - TSTEP)) s)"
	TSTEP=$now
}

[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot, the daemon)"
for t in debootstrap dpkg-buildpackage lintian python3; do
	command -v $t >/dev/null 2>&1 ||
	    skip "$t missing (sh scripts/install-deps package)"
done
python3 -c "import urllib.request as u; u.urlopen('$MIRROR/dists/$SUITE/Release', timeout=15)" \
    >/dev/null 2>&1 || skip "$MIRROR is not reachable"

# Mount in the chroot, remembering it for the cleanup.
ch_mount() {
	mount "$@"
	eval "MOUNTS=\"\$$# \$MOUNTS\""
}

# Unmount everything, newest first; remove the work dir only when
# nothing is mounted under it any more.
cleanup() {
	set +e
	[ -z "$DPID" ] || { kill -TERM "$DPID"; sleep 2; kill -KILL "$DPID"; } 2>/dev/null
	[ -z "$NPID" ] || kill "$NPID" 2>/dev/null
	for m in $MOUNTS; do
		umount -R "$m" 2>/dev/null || umount -R -l "$m"
	done
	if [ -n "$W" ]; then
		if grep -q " $W/" /proc/mounts; then
			echo "# install: mounts left under $W; not removed" >&2
		elif [ "${KEEP_TMP:-}" = 1 ]; then
			echo "# install: kept $W"
		else
			rm -rf --one-file-system "$W"
		fi
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

W=$(mktemp -d /tmp/sbinstall.XXXXXX)
CH=$W/root
mkdir -p "$CACHE/archives" "$CH"

# ------------------------------------------------------------ the chroot

TARBALL=$CACHE/$SUITE-minbase.tgz
if [ ! -s "$TARBALL" ]; then
	debootstrap --variant=minbase --include=make,git \
	    --make-tarball="$TARBALL.tmp" $SUITE "$W/tb" "$MIRROR" \
	    >"$W/step.log" 2>&1 || fail "debootstrap --make-tarball"
	mv "$TARBALL.tmp" "$TARBALL"
	rm -rf "$W/tb"
fi
debootstrap --variant=minbase --include=make,git --unpack-tarball="$TARBALL" \
    $SUITE "$CH" "$MIRROR" >"$W/step.log" 2>&1 || fail "debootstrap"
ok "debootstrap $SUITE (minbase, make, git)"

# The chroot's root a mount point (workers pivot_root), then the API
# file systems: the daemon needs /proc, cgroups, loop devices.
ch_mount --bind "$CH" "$CH"
ch_mount -t proc proc "$CH/proc"
ch_mount --rbind /sys "$CH/sys"
mount --make-rslave "$CH/sys"
ch_mount --rbind /dev "$CH/dev"
mount --make-rslave "$CH/dev"
ch_mount -t tmpfs tmpfs "$CH/run"
ch_mount -t tmpfs tmpfs "$CH/tmp"
ch_mount --bind "$CACHE/archives" "$CH/var/cache/apt/archives"
cp /etc/resolv.conf "$CH/etc/resolv.conf"
# As in a container image: packages start no service in the chroot.
printf '#!/bin/sh\nexit 101\n' >"$CH/usr/sbin/policy-rc.d"
chmod 755 "$CH/usr/sbin/policy-rc.d"
echo "deb $MIRROR $SUITE main" >"$CH/etc/apt/sources.list"

# The source as a fresh clone would have it (tracked and new files).
mkdir -p "$CH/src/skillbroker"
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
    tar --null -T - -cf -) | tar -xf - -C "$CH/src/skillbroker"

# Run a shell script in the chroot, its output in step.log.
in_ch() {
	chroot "$CH" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	    HOME=/root LANG=C.UTF-8 /bin/sh -euc "$1" >"$W/step.log" 2>&1
}

# What a service would leave: units and init scripts.
SERVICES='ls /lib/systemd/system/*.service /etc/init.d 2>/dev/null | sort'
in_ch "$SERVICES" || true
cp "$W/step.log" "$W/services.before"
# The optional test tools (Node.js, npm...) are tried once per checkout:
# the stamp skips them, as they are no part of an install.
in_ch 'mkdir -p /src/skillbroker/build && : >/src/skillbroker/build/.optional-deps &&
    cd /src/skillbroker && sh scripts/install-deps' || fail "install-deps"
in_ch "$SERVICES" || true
if ! cmp -s "$W/services.before" "$W/step.log"; then
	diff "$W/services.before" "$W/step.log" >"$W/diff" || true
	mv "$W/diff" "$W/step.log"
	fail "install-deps installed a service"
fi
ok "install-deps: $(in_ch 'dpkg-query -W | wc -l' && cat "$W/step.log") packages, no service"

# Every file of the chroot but the ones apt, dpkg and this test change.
SNAPSHOT='find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run \
    -o -path /tmp -o -path /src -o -path /var/cache -o -path /var/lib/apt \
    -o -path /var/lib/dpkg -o -path /var/log/apt -o -path /var/log/dpkg.log \
    -o -path /root -o -path /var/lib/man-db -o -path /var/cache/man \) -prune \
    -o -print | sort'
snapshot() {
	in_ch "$SNAPSHOT" || fail "snapshot"
	mv "$W/step.log" "$W/$1"
}
# The files in snapshot $2 but not in $1, but for those that may stay
# ($3: a grep -E) and those of a package still installed (the
# dependencies apt brought).
leftovers() {
	comm -13 "$W/$1" "$W/$2" | { grep -Ev "$3" || true; } >"$CH/tmp/left"
	in_ch 'while read -r f; do dpkg -S "$f" >/dev/null 2>&1 || echo "$f"; done </tmp/left' ||
	    fail "leftovers"
	cat "$W/step.log"
}

# man -l needs man-db (not in minbase).
in_ch 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends man-db' || fail "apt-get install man-db"
snapshot files.before

# ------------------------------------------------------- make install

in_ch 'cd /src/skillbroker && make -s install' || fail "make install"
ok "make install (PREFIX=/usr/local)"

# Start the daemon as the unit's ExecStart says, with systemd's
# notification socket played by notifyd.py; wait for READY=1.
start_daemon() { # $1: the unit file in the chroot
	exec_start=$(sed -n 's/^ExecStart=//p' "$CH$1")
	[ -n "$exec_start" ] || fail "no ExecStart in $1"
	rm -f "$CH/run/notify.log" "$CH/run/notify.sock"
	chroot "$CH" /usr/bin/python3 /src/skillbroker/tests/tools/notifyd.py \
	    /run/notify.sock /run/notify.log &
	NPID=$!
	i=0
	while [ ! -S "$CH/run/notify.sock" ] && [ $i -lt 50 ]; do
		sleep 0.1; i=$((i + 1))
	done
	chroot "$CH" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	    NOTIFY_SOCKET=/run/notify.sock $exec_start >"$W/daemon.log" 2>&1 &
	DPID=$!
	i=0
	while ! grep -q '^READY=1' "$CH/run/notify.log" 2>/dev/null; do
		kill -0 "$DPID" 2>/dev/null || { cp "$W/daemon.log" "$W/step.log"; fail "the daemon exited ($exec_start)"; }
		[ $i -lt 150 ] || { cp "$W/daemon.log" "$W/step.log"; fail "no READY=1 in 15 s"; }
		sleep 0.1; i=$((i + 1))
	done
	[ "$(cat "$CH/run/skillbroker/skillbrokerd.pid")" = "$DPID" ] ||
	    fail "the pidfile does not hold the master's pid $DPID"
}
stop_daemon() {
	kill -TERM "$DPID"
	wait "$DPID" || { cp "$W/daemon.log" "$W/step.log"; fail "the daemon stopped with status $?"; }
	DPID=""
	kill "$NPID" 2>/dev/null || true
	wait "$NPID" 2>/dev/null || true
	NPID=""
	grep -q '^STOPPING=1' "$CH/run/notify.log" || fail "no STOPPING=1"
	[ ! -e "$CH/run/skillbroker/skillbrokerd.pid" ] || fail "the pidfile is left"
	[ ! -e "$CH/run/skillbroker/skillbroker.sock" ] || fail "the socket is left"
}
call_skill() {
	in_ch 'skillctl invoke hello --phase execution -- world' ||
	    { cat "$W/daemon.log" >>"$W/step.log"; fail "skillctl invoke hello ($1)"; }
	[ "$(cat "$W/step.log")" = "hello world" ] || fail "skillctl invoke hello ($1): $(cat "$W/step.log")"
}

UNIT=/usr/local/lib/systemd/system/skillbroker.service
# The installed unit as systemd reads it (its programs in the chroot).
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -p "$W/unit"
	sed "s|^ExecStart=|ExecStart=$CH|" "$CH$UNIT" >"$W/unit/skillbroker.service"
	systemd-analyze verify --man=no "$W/unit/skillbroker.service" \
	    >"$W/step.log" 2>&1 || fail "systemd-analyze verify $UNIT"
	score=$(systemd-analyze security --offline=yes \
	    "$W/unit/skillbroker.service" 2>&1 | sed -n 's/.*exposure level for [^:]*: //p')
	ok "systemd-analyze verify; security: $score"
fi
start_daemon $UNIT
call_skill "make install"
stop_daemon
ok "make install: started by ExecStart, READY=1, pidfile, hello world, stopped"

pages=$(cd "$CH" && ls usr/local/share/man/man*/* 2>/dev/null || true)
[ -n "$pages" ] || fail "no manual page installed"
for p in $pages; do
	# The page rendered, nothing on stderr.
	in_ch "MANWIDTH=80 MANPAGER=cat man -l /$p >/tmp/page 2>/tmp/err
	    [ -s /tmp/page ] || { echo 'no output'; exit 1; }
	    cat /tmp/err" || fail "man -l /$p"
	[ ! -s "$W/step.log" ] || fail "man -l /$p"
done
ok "man -l renders $(echo $pages | wc -w) pages"

in_ch 'cd /src/skillbroker && make -s uninstall' || fail "make uninstall"
snapshot files.uninstalled
# make uninstall leaves the state, the audit log and the role users.
left=$(leftovers files.before files.uninstalled \
    '^/var/lib/skillbroker(/|$)|^/var/log/skillbroker(/|$)|^/etc/(passwd|group|shadow|gshadow|subuid|subgid)-?$|^/usr/local/(lib/systemd|lib/systemd/system|share/man/man[0-9]|lib/pkgconfig|libexec)$|^/etc/logrotate.d$')
[ -z "$left" ] || { echo "$left" >"$W/step.log"; fail "make uninstall left files"; }
in_ch 'rm -rf /var/lib/skillbroker /var/log/skillbroker &&
    for u in _sb-broker _sb-policyd _sb-auditd _sb-netproxy; do userdel $u; done' ||
    fail "removing what make uninstall leaves"
ok "make uninstall"

# ------------------------------------------------------------ the .deb

mkdir -p "$W/pkg/skillbroker"
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
    tar --null -T - -cf -) | tar -xf - -C "$W/pkg/skillbroker"
(cd "$W/pkg/skillbroker" && dpkg-buildpackage -us -uc -b) >"$W/step.log" 2>&1 ||
    fail "dpkg-buildpackage -us -uc -b"
ok "dpkg-buildpackage -us -uc -b"
lintian --fail-on error,warning "$W"/pkg/skillbroker_*.changes \
    >"$W/lintian.log" 2>&1 ||
    { cp "$W/lintian.log" "$W/step.log"; fail "lintian"; }
sed 's/^/# lintian: /' "$W/lintian.log"
ok "lintian: no error, no warning"

snapshot files.before
cp "$W"/pkg/skillbroker_*.deb "$W"/pkg/libskillbroker1_*.deb "$CH/tmp/"
in_ch 'cd /tmp && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends ./skillbroker_*.deb ./libskillbroker1_*.deb' ||
    fail "apt-get install the .deb"
in_ch 'for u in _sb-broker _sb-policyd _sb-auditd _sb-netproxy; do id $u; done' ||
    fail "the package made no role users"
start_daemon /lib/systemd/system/skillbroker.service
call_skill ".deb"
stop_daemon
ok ".deb: installed, started by ExecStart, hello world, stopped"
in_ch 'dpkg --purge skillbroker libskillbroker1' || fail "dpkg --purge"
snapshot files.purged
left=$(leftovers files.before files.purged \
    '^/etc/(passwd|group|shadow|gshadow|subuid|subgid)-?$|^/var/lib/logrotate$')
[ -z "$left" ] || { echo "$left" >"$W/step.log"; fail "dpkg --purge left files"; }
ok ".deb: dpkg --purge leaves only the role users"

echo "# install: $(($(date +%s) - T0)) s in all"
