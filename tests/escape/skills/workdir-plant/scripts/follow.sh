#!/bin/sh
# follow HOSTFILE HOSTDIR: follow what plant left.
ls -la . | sed 's/^/INFO /'
for l in link-file link-shadow hard-link hard-secret link-dir/readable \
    link-dir/secret sub/deep/readable "link-root$1" "link-root$2/readable"; do
	if out=$(head -c 200 "$l" 2>&1); then
		echo "ESCAPED read $l: $(printf '%s' "$out" | tr '\n' ' ')"
	else
		echo "BLOCKED read $l: $out"
	fi
done
if out=$( (echo overwritten >>link-file) 2>&1); then
	echo "ESCAPED append through link-file"
else
	echo "BLOCKED append through link-file: $out"
fi
echo DONE
