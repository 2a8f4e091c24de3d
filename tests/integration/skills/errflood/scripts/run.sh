#!/bin/sh
printf '0123456789'
head -c 100000 /dev/zero | tr '\0' 'e' >&2
