#!/bin/sh
# The test planted bin/suid setuid and setgid root (mode 6755). Run it,
# then the host's own setuid programs.
echo "INFO $(ls -ln "$SKILL_DIR/bin/suid" 2>&1)"
echo "INFO mounts: $(grep -E ' (/|/skill|/usr|/work|/tmp) ' /proc/self/mounts 2>/dev/null | tr '\n' ';')"
"$SKILL_DIR/bin/suid"
echo "INFO suid exit $?"
for p in /usr/bin/su /bin/su /usr/bin/passwd /usr/bin/sudo /usr/bin/newgrp \
    /usr/bin/chsh /usr/bin/mount; do
	[ -e "$p" ] && echo "INFO $(ls -ln "$p")"
done
out=$(su root -c 'id -u' </dev/null 2>&1)
case $out in
*0) [ "$(printf '%s' "$out" | tail -n 1)" = 0 ] && echo "ESCAPED su gave uid 0" ||
	echo "BLOCKED su: $out" ;;
*) echo "BLOCKED su: $out" ;;
esac
out=$(passwd -S root </dev/null 2>&1)
case $out in
"root "*) echo "ESCAPED passwd -S root: $out" ;;
*) echo "BLOCKED passwd: $out" ;;
esac
if command -v sudo >/dev/null 2>&1; then
	out=$(sudo -n id -u </dev/null 2>&1)
	[ "$out" = 0 ] && echo "ESCAPED sudo gave uid 0" || echo "BLOCKED sudo: $out"
fi
echo DONE
