#!/bin/sh
# Names the daemon reports back (files_written) but did not choose:
# invalid UTF-8, control characters, a quote and a newline.
for n in "$(printf '\377\376')" "$(printf 'a\001b')" "$(printf 'q"\\x')" "$(printf 'nl\nx')"; do
	echo data > "$n" && echo "INFO wrote one"
done
echo DONE
