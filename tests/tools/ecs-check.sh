#!/bin/sh
# ecs-check.sh FILE...: every field of every audit record in FILE... (JSON
# Lines, gzip or not) is an ECS field of the right type, of the ECS
# version tests/data/ecs-8.11.0.txt was taken from, or lies under one of
# skillbroker's own top-level names (CUSTOM below, none of which is an
# ECS field set); no key holds a dot (every name is nested, event.hash
# too); every record has event.category, event.dataset and event.hash;
# each event.category allows the record's event.type; ecs.version is
# that version. Prints each violation once ("path: why") and exits 1
# if there is one; 2 on a usage error.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REF=${ECS_REF:-$HERE/../data/ecs-8.11.0.txt}
CUSTOM="audit approval daemon files_written grant limits netproxy output
policy request session skill worker"
[ $# -gt 0 ] || { echo "usage: ecs-check.sh FILE..." >&2; exit 2; }
[ -r "$REF" ] || { echo "ecs-check: no $REF" >&2; exit 2; }
VERSION=$(awk '$1 == "version" { print $2 }' "$REF")
TMPF=$(mktemp) || exit 2
trap 'rm -f "$TMPF"' EXIT
# Each record's leaves as "leaf PATH JSONTYPE" (array items: the path of
# the array), dotted keys, category/type pairs, the ECS version and the
# values of ip fields, once each.
IPS=$(awk '$1 == "field" && $3 == "ip" { printf "%s\"%s\"", sep, $2; sep = "," }' "$REF")
zcat -f "$@" | jq -r --argjson ips "[$IPS]" '
	(paths(scalars) as $p
	    | "leaf \($p | map(select(type == "string")) | join(".")) "
	      + (getpath($p) | if type == "number" and . == floor then "integer" else type end)),
	(paths | map(select(type == "string" and test("\\.")))[] | "dotted \(.)"),
	((.event.category // [] | if type == "array" then .[] else "NOT-AN-ARRAY" end) as $c
	    | "pair \($c) \(.event.type)"),
	"version \(.ecs.version)",
	(["event.category", "event.dataset", "event.hash"][] as $n
	    | select(getpath($n | split(".")) == null) | "missing \($n)"),
	(. as $r | $ips[] | . as $n | ($r | getpath($n | split(".")))
	    | select(. != null) | "ip \($n) \(.)")
' 2>/dev/null | sort -u >"$TMPF" || { echo "ecs-check: not JSON Lines" >&2; exit 2; }
awk -v custom="$CUSTOM" -v version="$VERSION" '
	BEGIN {
		n = split(custom, c, /[ \n]+/)
		for (i = 1; i <= n; i++) if (c[i] != "") own[c[i]] = 1
		# ECS type -> the JSON type its values take
		js["keyword"] = js["constant_keyword"] = js["wildcard"] = "string"
		js["match_only_text"] = js["text"] = js["ip"] = js["date"] = "string"
		js["long"] = js["integer"] = js["short"] = js["byte"] = "integer"
		js["unsigned_long"] = "integer"
		js["float"] = js["double"] = js["scaled_float"] = "number"
		js["half_float"] = "number"
		js["boolean"] = "boolean"
	}
	FNR == NR {
		if ($1 == "field") type[$2] = $3
		else if ($1 == "fieldset") set[$2] = 1
		else if ($1 == "category") for (i = 3; i <= NF; i++) ok[$2 " " $i] = 1
		next
	}
	function bad(w) { if (!(w in said)) { print w; said[w] = 1; errs++ } }
	$1 == "leaf" {
		top = $2; sub(/\..*/, "", top)
		if (top in own) next
		if (!($2 in type)) { bad($2 ": not an ECS " version " field, and not under one of skillbroker'"'"'s own names"); next }
		want = js[type[$2]]
		if (want == "") { bad($2 ": ECS type " type[$2] " is not checked here"); next }
		if ($3 != want && !(want == "number" && $3 == "integer"))
			bad($2 ": a JSON " $3 " where ECS has " type[$2])
		next
	}
	$1 == "dotted" { bad($2 ": a key with a dot (ECS names are nested objects)"); next }
	$1 == "missing" { bad($2 ": missing from a record"); next }
	$1 == "pair" && !(($2 " " $3) in ok) { bad("event.category " $2 ": does not allow event.type " $3) }
	$1 == "version" && $2 != version { bad("ecs.version " $2 ": not " version) }
	$1 == "ip" && !($3 ~ /^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$/ || $3 ~ /^[0-9a-fA-F:.]*:[0-9a-fA-F:.]*$/) {
		bad($2 ": " $3 " is not an IP address")
	}
	END {
		for (t in own) if (t in set) bad(t ": skillbroker'"'"'s own name is an ECS field set")
		exit errs > 0
	}
' "$REF" "$TMPF"
