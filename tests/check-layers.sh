#!/bin/sh
# check-layers.sh: the layering the headers claim, checked on the build.
#
#   sh tests/check-layers.sh [OBJDIR]      (default: build/obj)
#
# 1. In each of broker/, master/, auditd/, policyd/, worker/, files call
#    each other one way only: the graph "A calls a function defined in
#    B" (nm on the objects of the directory's .c files) has no cycle.
#    A cycle that is already known is listed below, printed on every run
#    and allowed; any other cycle fails.
# 2. proto/ and lib/ include no header of a role directory.
# 3. master/ and worker/ include nothing from broker/.
# 4. No file outside tests/ writes a raw map header (msgpack_pack_map)
#    but proto/mp.c: maps count their own entries.
# 5. The clients of the library (mcp/, examples/, tests/clients/) speak
#    the protocol through include/skillbroker.h only: they include
#    nothing from proto/, libskillbroker/ or a role directory.
# Prints what it found; exits 1 on a violation, 2 if it cannot check.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OBJ=${1:-build/obj}
ROLES="broker master auditd policyd worker"

# Known cycles, one "DIR CALLER CALLEE" edge each: the edge that goes
# against the stated direction. Remove a line once its cycle is gone.
KNOWN_CYCLES=""

TMP=$(mktemp -d) || exit 2
trap 'rm -rf "$TMP"' EXIT
fail=0

# The objects of the .c files of $1; 1 if one is not built.
objects() {
	for c in "$1"/*.c; do
		o="$OBJ/${c%.c}.o"
		if [ ! -f "$o" ]; then
			echo "layers: $o missing: build first" >&2
			return 1
		fi
		printf '%s\n' "$o"
	done
}

# "CALLER CALLEE FUNCTION" for every call from one object to another.
calls() {
	xargs nm -A <"$1" | awk '
	{
		f = $1; sub(/:.*/, "", f); sub(/.*\//, "", f); sub(/\.o$/, ".c", f)
		if ($(NF - 1) == "U") use[f] = use[f] " " $NF
		else if ($(NF - 1) == "T") def[$NF] = f
	}
	END {
		for (a in use) {
			n = split(use[a], u, " ")
			for (i = 1; i <= n; i++)
				if ((u[i] in def) && def[u[i]] != a)
					print a, def[u[i]], u[i]
		}
	}' | sort -u
}

# The loops tsort finds in the edges on stdin: one line of members each.
loops() {
	tsort 2>&1 >/dev/null | awk '
	/input contains a loop:/ { if (m != "") print m; m = ""; next }
	{ sub(/^tsort: /, ""); m = m (m == "" ? "" : " ") $0 }
	END { if (m != "") print m }'
}

# Every call between members of one loop ($2), from the calls file $1.
loop_calls() {
	awk -v members=" $2 " '
	index(members, " " $1 " ") && index(members, " " $2 " ") {
		k = $1 " -> " $2
		if (!(k in fn)) order[++n] = k
		fn[k] = fn[k] (fn[k] == "" ? "" : ", ") $3
	}
	END { for (i = 1; i <= n; i++) print "    " order[i] ": " fn[order[i]] }
	' "$1"
}

for d in $ROLES; do
	objects "$d" >"$TMP/$d.objs" || exit 2
	calls "$TMP/$d.objs" >"$TMP/$d.calls"
	awk '{ print $1, $2 }' "$TMP/$d.calls" | sort -u >"$TMP/$d.edges"
	printf '%s\n' "$KNOWN_CYCLES" | awk -v d="$d" '$1 == d { print $2, $3 }' \
	    >"$TMP/$d.known"
	grep -vxF -f "$TMP/$d.known" "$TMP/$d.edges" >"$TMP/$d.rest"
	nedges=$(wc -l <"$TMP/$d.edges")
	nfiles=$(wc -l <"$TMP/$d.objs")
	# Any cycle left without the known edges is new: that fails.
	loops <"$TMP/$d.rest" >"$TMP/$d.loops"
	if [ -s "$TMP/$d.loops" ]; then
		while read -r m; do
			echo "layers: CYCLE in $d/: $m"
			loop_calls "$TMP/$d.calls" "$m"
		done <"$TMP/$d.loops"
		fail=1
		continue
	fi
	# Each known edge: the cycle it closes, or a note that it is gone.
	while read -r a b; do
		if ! grep -qxF "$a $b" "$TMP/$d.edges"; then
			echo "layers: note: known cycle $d/$a -> $b is gone;" \
			    "remove it from KNOWN_CYCLES in $0"
			continue
		fi
		{ cat "$TMP/$d.rest"; echo "$a $b"; } | loops | while read -r m; do
			echo "layers: known cycle in $d/ (not fixed yet): $m"
			loop_calls "$TMP/$d.calls" "$m"
		done
	done <"$TMP/$d.known"
	if [ -s "$TMP/$d.known" ]; then
		echo "layers: $d/: $nfiles files, $nedges call edges, no other cycle"
	else
		echo "layers: $d/: $nfiles files, $nedges call edges, no cycle"
	fi
done

# Where "#include "X"" in file $1 points, relative to the root.
includes() {
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1" |
	while read -r inc; do
		printf '%s %s\n' "$inc" \
		    "$(realpath -m --relative-to="$ROOT" "$(dirname "$1")/$inc")"
	done
}

for f in proto/*.[ch] lib/*.[ch]; do
	includes "$f" | while read -r inc path; do
		case $path in
		broker/* | master/* | auditd/* | policyd/* | worker/* | cli/*)
			echo "layers: $f includes \"$inc\", a role's header"
			;;
		esac
	done
done >"$TMP/inc"
for f in master/*.[ch] worker/*.[ch]; do
	includes "$f" | while read -r inc path; do
		case $path in
		broker/*) echo "layers: $f includes \"$inc\", from broker/" ;;
		esac
	done
done >>"$TMP/inc"
if [ -s "$TMP/inc" ]; then
	cat "$TMP/inc"
	fail=1
else
	echo "layers: proto/ and lib/ include no role header;" \
	    "master/ and worker/ nothing from broker/"
fi

for f in mcp/*.[ch] examples/*.c tests/clients/*.c; do
	[ -e "$f" ] || continue
	includes "$f" | while read -r inc path; do
		case $path in
		include/* | lib/* | mcp/*) ;;
		*) echo "layers: $f includes \"$inc\": a client of the library uses include/skillbroker.h" ;;
		esac
	done
done >"$TMP/cli"
if [ -s "$TMP/cli" ]; then
	cat "$TMP/cli"
	fail=1
else
	echo "layers: the library's clients include only its public header (and lib/)"
fi

find lib proto master broker policyd auditd worker cli bench \
    -name '*.[ch]' ! -path proto/mp.c -print 2>/dev/null |
	xargs grep -n 'msgpack_pack_map' >"$TMP/rawmap"
if [ -s "$TMP/rawmap" ]; then
	sed 's/^/layers: a raw map header outside proto\/mp.c: /' "$TMP/rawmap"
	fail=1
else
	echo "layers: no raw map header outside proto/mp.c"
fi

[ "$fail" -eq 0 ] && echo "layers: ok" || echo "layers: FAILED"
exit "$fail"
