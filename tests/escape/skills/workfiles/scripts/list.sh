#!/bin/sh
# list: this call's uid, the work dir's file system (KiB), then each
# entry: FILE <name> <owner uid> <size in bytes> <KiB used>.
echo "UID $(id -u)"
df -Pk . | awk 'NR == 2 { print "FS size_kb", $2, "used_kb", $3 }'
find . -mindepth 1 -printf 'FILE %P %U %s %k\n'
echo DONE
