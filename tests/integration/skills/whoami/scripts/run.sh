#!/bin/sh
echo "$(id -u) $(id -g) $(pwd)"
