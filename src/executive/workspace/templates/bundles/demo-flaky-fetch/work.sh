#!/bin/sh
# Demo worker: fails on its first attempt (a flaky mirror), succeeds on the retry.
set -eu
cd "$1"
if [ ! -f .tried ]; then
  touch .tried
  echo "error: ECONNRESET while fetching the mirror" >&2
  exit 1
fi
printf '# Release notes\n\n- first release\n' > NOTES.md
echo "fetched on retry"
