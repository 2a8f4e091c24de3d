#!/bin/sh
# check-msg-doc.sh: the message types in the enum of proto/msg.h and in
# docs/architecture.md must agree. Every "MSG_NAME = N" of the enum must
# appear in the document as "`NAME` (N)", and every "`NAME` (N)" in the
# document must be in the enum. Prints each difference and fails.
# Usage: check-msg-doc.sh [msg.h [architecture.md]]
set -u
hdr=${1:-proto/msg.h}
doc=${2:-docs/architecture.md}
LC_ALL=C
export LC_ALL

for f in "$hdr" "$doc"; do
	[ -r "$f" ] || { echo "check-msg-doc: cannot read $f" >&2; exit 2; }
done

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# "NAME N" for each enumerator of enum msg_type, comments stripped.
sed -n '/^enum msg_type {/,/^};/p' "$hdr" |
	sed -e 's,/\*.*\*/,,' |
	sed -n 's/^[[:space:]]*MSG_\([A-Z0-9_]*\)[[:space:]]*=[[:space:]]*\([0-9][0-9]*\).*/\1 \2/p' |
	sort -u >"$tmp/code"
if [ ! -s "$tmp/code" ]; then
	echo "check-msg-doc: no MSG_NAME = N in enum msg_type of $hdr" >&2
	exit 2
fi

# "NAME N" for each "`NAME` (N)" in the document.
grep -o '`[A-Z][A-Z0-9_]*` ([0-9][0-9]*)' "$doc" |
	sed 's/^`\([A-Z0-9_]*\)` (\([0-9]*\))$/\1 \2/' |
	sort -u >"$tmp/doc"

status=0
# In the enum, not in the document.
comm -23 "$tmp/code" "$tmp/doc" | sort -k2,2n >"$tmp/missing"
while read -r name num; do
	said=$(awk -v n="$name" '$1 == n { printf "%s(%s)", sep, $2; sep = ", " }' "$tmp/doc")
	if [ -n "$said" ]; then
		echo "$doc: \`$name\` is MSG_$name = $num in $hdr, but the document says \`$name\` $said"
	else
		echo "$doc: lacks \`$name\` ($num): MSG_$name = $num in $hdr"
	fi
	status=1
done <"$tmp/missing"
# In the document, not in the enum (a wrong number was named above).
comm -13 "$tmp/code" "$tmp/doc" | sort -k2,2n >"$tmp/extra"
while read -r name num; do
	if awk -v n="$name" '$1 == n { found = 1 } END { exit !found }' "$tmp/code"; then
		awk -v n="$name" '$1 == n { found = 1 } END { exit !found }' "$tmp/missing" && continue
		echo "$doc: names \`$name\` ($num), but $hdr has MSG_$name = $(awk -v n="$name" '$1 == n { print $2 }' "$tmp/code")"
	else
		echo "$doc: names \`$name\` ($num), which enum msg_type in $hdr does not have"
	fi
	status=1
done <"$tmp/extra"

if [ "$status" -eq 0 ]; then
	echo "check-msg-doc: $doc names all $(wc -l <"$tmp/code" | tr -d ' ') message types of $hdr"
else
	echo "check-msg-doc: $doc and $hdr disagree (see above)"
fi
exit "$status"
