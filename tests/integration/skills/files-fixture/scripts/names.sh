#!/bin/sh
# names: files whose names a reply must carry escaped or whole.
set -eu
mkdir -p names
printf 'one\n' >"names/$(printf 'new\nline')"
printf 'two\n' >"names/$(printf 'bad\377\376bytes')"
printf 'three\n' >"names/$(printf 'ctl\001\033[31mred')"
long=$(printf '%0255d' 0 | tr 0 L)
printf 'four\n' >"names/$long"
echo named
