#!/bin/sh
echo "hello ok $*"
