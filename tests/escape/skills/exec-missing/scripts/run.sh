#!/bin/sh
echo "ESCAPED a skill with a missing program ran"
echo DONE
