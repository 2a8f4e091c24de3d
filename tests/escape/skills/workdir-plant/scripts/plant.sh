#!/bin/sh
# plant HOSTFILE HOSTDIR: leave traps in the work dir for the next call
# and for whatever root code walks the work dir (set-up, file tracking).
ln -sfn "$1" link-file && echo "INFO planted link-file -> $1"
ln -sfn "$2" link-dir && echo "INFO planted link-dir -> $2"
ln -sfn / link-root && echo "INFO planted link-root -> /"
ln -sfn /etc/shadow link-shadow && echo "INFO planted link-shadow"
mkdir -p sub && ln -sfn "$2" sub/deep && echo "INFO planted sub/deep -> $2"
if out=$(ln "$1" hard-link 2>&1); then
	echo "ESCAPED hard link to host file $1"
else
	echo "BLOCKED hard link to $1: $out"
fi
if out=$(ln "$2/secret" hard-secret 2>&1); then
	echo "ESCAPED hard link to host file $2/secret"
else
	echo "BLOCKED hard link to $2/secret: $out"
fi
mkfifo fifo 2>/dev/null && echo "INFO planted fifo"
echo DONE
