#!/bin/sh
# run: start the programs whose start-up files another skill could plant.
echo "HOME $HOME"
if command -v python3 >/dev/null 2>&1; then
	python3 -c 'print("RAN python3")'
fi
sh -l -c 'echo "RAN sh -l"'
if command -v bash >/dev/null 2>&1; then
	bash -l -c 'echo "RAN bash -l"'
	bash -i -c 'echo "RAN bash -i"' 2>/dev/null
fi
echo DONE
