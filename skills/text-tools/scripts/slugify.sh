# Print a URL slug of the arguments: sh scripts/slugify.sh WORDS...
# The rules are in references/rules.md.
set -eu
if [ $# -eq 0 ]; then
	echo "usage: sh scripts/slugify.sh WORDS..." >&2
	exit 2
fi
slug=$(printf '%s' "$*" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-')
slug=${slug#-}
slug=${slug%-}
if [ -z "$slug" ]; then
	echo "slugify.sh: no letter or digit in \"$*\"" >&2
	exit 2
fi
printf '%s\n' "$slug"
