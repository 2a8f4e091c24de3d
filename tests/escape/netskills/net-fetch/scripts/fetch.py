#!/usr/bin/python3
"""fetch.py URL: urllib.request.urlopen through the proxy variables, with
the test CA; reports PY_STATUS, PY_SIZE, BODY (a 200), or PY_STATUS,
PY_ERRHDR (X-Skillbroker-Error), PY_ERRBODY (an HTTP error), or PY_EXC
(anything else, e.g. a refused CONNECT), then DONE."""
import ssl
import sys
import urllib.error
import urllib.request

url = sys.argv[1]
ctx = ssl.create_default_context(cafile="/skill/ca.pem")
try:
    with urllib.request.urlopen(url, context=ctx, timeout=20) as r:
        body = r.read()
        print("PY_STATUS", r.status)
        print("PY_SIZE", len(body))
        print("BODY", body[:4096].decode("utf-8", "replace").rstrip("\n"))
except urllib.error.HTTPError as e:
    print("PY_STATUS", e.code)
    print("PY_ERRHDR", e.headers.get("X-Skillbroker-Error", "-"))
    print("PY_ERRBODY", e.read(512).decode("utf-8", "replace").strip())
except Exception as e:
    print("PY_EXC", type(e).__name__, str(e).replace("\n", " "))
print("DONE")
sys.stdout.flush()
