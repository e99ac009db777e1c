#!/usr/bin/env bash
# build-with-progress.sh [-m WHAT] CMD...: run a build command, saying what
# it builds (WHAT; default bin/) and, every 30 s, that it still runs: the
# first build on a fresh machine compiles Kubernetes' API server and takes
# minutes, which silence would make look like a hang.
set -uo pipefail
what="bin/ (the first build on a fresh machine compiles the embedded Kubernetes API server: several minutes; later builds take seconds)"
if [[ ${1:-} == -m ]]; then
  what=$2
  shift 2
fi
start=$SECONDS
echo "==> Building $what"
( while sleep 30; do echo "    ... still building ($((SECONDS - start)) s so far)"; done ) &
ticker=$!
trap 'kill $ticker 2>/dev/null' EXIT
"$@"
rc=$?
kill $ticker 2>/dev/null
if ((rc == 0)); then
  echo "==> Built in $((SECONDS - start)) s"
fi
exit $rc
