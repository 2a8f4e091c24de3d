#!/bin/sh
echo started
exec sleep 30
