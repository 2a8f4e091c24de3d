"""Tests of the skillbroker Python client: unit tests, fake-server tests, and live tests against a daemon."""
