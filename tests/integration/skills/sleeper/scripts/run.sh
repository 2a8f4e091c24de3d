#!/bin/sh
# Not exec: the sleep is a child, so a timeout must kill the whole group.
echo started
sleep 30
echo "not reached"
