#!/bin/sh
# leaks HOSTNAME PATH MASTER_PID: what a skill can learn from inside about
# the host and about other principals' calls.
h=$(uname -n)
if [ "$h" = "$1" ]; then
	echo "ESCAPED hostname is the host's: $h"
else
	echo "BLOCKED hostname: $h"
fi
# Group names: the master's pid and a call counter anyone could read.
named=$(grep -v ':/$' /proc/self/cgroup | tr '\n' ' ')
if [ -n "$named" ]; then
	echo "ESCAPED cgroup names: $named"
else
	echo "BLOCKED cgroup names: every hierarchy at /"
fi
case $named in
*"m$3."*) echo "ESCAPED master pid $3 in cgroup names" ;;
esac
# The host path of the skills dir, in any mount's root or options.
if grep -qF -- "$2" /proc/self/mountinfo; then
	echo "ESCAPED mountinfo names $2: $(grep -F -- "$2" /proc/self/mountinfo | head -n 2 | tr '\n' '|')"
else
	echo "BLOCKED mountinfo: no host path of the skills"
fi
# The skill's own files are there all the same.
[ -r /skill/SKILL.md ] && echo "SKILL readable" || echo "UNEXPECTED /skill/SKILL.md unreadable"
echo DONE
