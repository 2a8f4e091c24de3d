#!/bin/sh
head -c 100000 /dev/zero | tr '\0' 'o'
head -c 5000 /dev/zero | tr '\0' 'e' >&2
