#!/bin/sh
# plant HOSTFILE HOSTDIR NEWFILE: symbolic links out of the work dir
# (NEWFILE does not exist) and inside it, and a FIFO, for the requests
# that must never follow them.
set -eu
ln -sfn "$1" hostfile      # a file on the host
ln -sfn "$3" newfile       # a file the host does not have
ln -sfn /etc/hosts hosts   # a file the sandbox shows too
ln -sfn / d                # the root
ln -sfn "$2" hostdir       # a directory of the host
mkdir -p in sub
echo inside >in/target
ln -sfn target in/link     # a file beside it, in the work dir
ln -sfn ../in sub/din      # a directory of the work dir
mkfifo fifo
echo planted
