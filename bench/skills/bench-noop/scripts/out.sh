#!/bin/sh
# Print N bytes of "x" on stdout, N the first argument (0 when absent),
# at most 65536; builtins only.
n=${1:-0}
case $n in
'' | *[!0-9]*) echo "out.sh: N must be a number" >&2; exit 2 ;;
??????*) n=65536 ;;
esac
[ "$n" -le 65536 ] || n=65536
[ "$n" -gt 0 ] || exit 0
s=x
while [ ${#s} -lt "$n" ]; do
	s=$s$s
done
printf '%.*s' "$n" "$s"
