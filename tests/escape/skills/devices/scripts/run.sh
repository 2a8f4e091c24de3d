#!/bin/sh
# Host devices must not be reachable; device nodes must not be creatable.
echo "INFO /dev: $(ls -A /dev 2>&1 | tr '\n' ' ')"
for d in /dev/vda /dev/sda /dev/nvme0n1 /dev/mem /dev/kmem /dev/port \
    /dev/kmsg /dev/console /dev/tty /dev/ptmx /dev/fuse /dev/net/tun \
    /dev/loop0 /dev/loop-control /dev/dm-0 /dev/vsock /dev/cpu/0/msr \
    /dev/vcs /dev/input/event0; do
	# opening never blocks for these (no FIFOs), reading is not needed
	if out=$( (exec 3<"$d") 2>&1); then
		echo "ESCAPED open $d: $(ls -ln "$d" 2>&1)"
	elif [ -e "$d" ]; then
		echo "BLOCKED open $d: present, $out"
	else
		echo "BLOCKED open $d: absent"
	fi
done
for n in "/tmp/sbnull c 1 3" "/work/sbnull c 1 3" "/tmp/sbdisk b 254 0"; do
	# shellcheck disable=SC2086
	set -- $n
	if out=$(mknod "$1" "$2" "$3" "$4" 2>&1); then
		echo "ESCAPED mknod $1"
		rm -f "$1"
	else
		echo "BLOCKED mknod $1: $out"
	fi
done
echo DONE
