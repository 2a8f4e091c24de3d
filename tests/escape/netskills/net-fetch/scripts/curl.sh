#!/bin/sh
# curl.sh ARGS...: one curl run through the proxy variables the sandbox
# set, reported in lines the suite reads:
#   CURL_HTTP CODE, CURL_CONNECT CODE (the proxy's answer to a CONNECT),
#   CURL_SIZE BYTES (curl's -w), CURL_EXIT STATUS,
#   ERR LINE (each line of curl -v's stderr), BODY TEXT (the first 4 KiB
#   of the body, when there is one), DONE
curl -sS -v --max-time 20 -o /tmp/body \
    -w 'CURL_HTTP %{http_code}\nCURL_CONNECT %{http_connect}\nCURL_SIZE %{size_download}\n' \
    "$@" 2>/tmp/err
echo "CURL_EXIT $?"
while IFS= read -r l; do
	printf 'ERR %s\n' "$l"
done </tmp/err
if [ -s /tmp/body ]; then
	printf 'BODY '
	head -c 4096 /tmp/body
	echo
fi
echo DONE
