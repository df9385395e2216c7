#!/bin/sh
# Demo worker: does the work of one step, and shows what the executive handed it.
set -eu
out="$1"
cd "$out"
echo "step ${GOAL_STEP:-?} attempt ${GOAL_ATTEMPT:-?} in $(pwd)"
echo "--- the memory pack this worker received (from CLAUDE.md) ---"
sed -n '/^## Memory Pack/,$p' CLAUDE.md || true
printf '<!doctype html>\n<link rel="stylesheet" href="style.css">\n<h1>Hello, world</h1>\n' > index.html
if [ "${GOAL_STEP:-1}" = "2" ]; then
  printf 'h1 { font-family: sans-serif; }\n' > style.css
fi
