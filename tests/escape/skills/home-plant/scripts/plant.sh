#!/bin/sh
# plant: start-up files that interpreters and shells run by themselves,
# in $HOME and in the work dir, each saying ESCAPED if it ever runs.
for h in "$HOME" /work; do
	if command -v python3 >/dev/null 2>&1; then
		site=$(HOME=$h python3 -c 'import site; print(site.getusersitepackages())')
		mkdir -p "$site" &&
			echo 'print("ESCAPED planted usercustomize ran")' >"$site/usercustomize.py" &&
			echo 'import sys; print("ESCAPED planted .pth ran")' >"$site/planted.pth" &&
			echo "PLANTED $site"
	fi
	echo 'echo "ESCAPED planted .profile ran"' >"$h/.profile"
	echo 'echo "ESCAPED planted .bashrc ran"' >"$h/.bashrc"
	echo 'echo "ESCAPED planted .bash_profile ran"' >"$h/.bash_profile"
	echo "PLANTED $h"
done
echo DONE
