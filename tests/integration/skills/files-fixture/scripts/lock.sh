#!/bin/sh
# lock: a file and a directory (with a file in it) of mode 000.
set -eu
echo locked >locked
chmod 000 locked
mkdir -p lockdir/sub
echo inside >lockdir/sub/f
chmod 000 lockdir
echo locked
