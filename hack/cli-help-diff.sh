#!/usr/bin/env bash
# cli-help-diff.sh [REV]: show that the flotilla command line did not change.
#
# Builds cmd/flotilla at git revision REV (default 874ca88, the CLI before it
# became a package per command) and from the work tree, walks every command
# of the tree recursively (the command lists of `--help`), and diffs, for each
# command, `flotilla <cmd...> --help` and the flags its shell completion
# offers; then a few outputs that need no cluster (`flotilla version`, bad
# flags, bad arguments). Prints "identical: N commands" and exits 0, or
# prints the diff and exits 1. With KEEP=DIR, the compared outputs are left in
# DIR (old, new, and the command lists).
set -euo pipefail
cd "$(dirname "$0")/.."
REV=${1:-874ca88}

tmp=$(mktemp -d)
keep() {
  if [[ -n ${KEEP:-} ]]; then mkdir -p "$KEEP" && cp -r "$tmp/out/." "$KEEP"; fi
  rm -rf "$tmp"
}
trap keep EXIT
mkdir -p "$tmp/src" "$tmp/old" "$tmp/new" "$tmp/out"

# Both binaries get the same version stamp, so that `flotilla version` and the
# default agent image in `join --help` compare equal.
ldflags="-X github.com/flotilla-io/flotilla/internal/version.Version=v0.0.0-helpdiff"
git archive "$REV" | tar -x -C "$tmp/src"
(cd "$tmp/src" && go build -buildvcs=false -ldflags "$ldflags" -o "$tmp/old/flotilla" ./cmd/flotilla)
go build -buildvcs=false -ldflags "$ldflags" -o "$tmp/new/flotilla" ./cmd/flotilla

# No kubeconfig anywhere: nothing below may reach a cluster.
export KUBECONFIG=$tmp/no-such-kubeconfig HOME=$tmp/home

# subcommands BIN CMD...: the names listed in the command sections of
# `BIN CMD... --help` ("Available Commands:", "Additional Commands:" and the
# groups' titles), one a line.
subcommands() {
  local bin=$1
  shift
  "$bin" "$@" --help | awk '
    /^[^ ].*[Cc]ommands.*:$/ { in_list = 1; next }
    /^$/ { in_list = 0 }
    in_list && /^  [a-z]/ { print $1 }'
}

# walk BIN CMD...: every command under CMD..., depth first, one a line as its
# words (the root is the empty line).
walk() {
  local bin=$1
  shift
  echo "$*"
  local sub
  for sub in $(subcommands "$bin" "$@"); do
    walk "$bin" "$@" "$sub"
  done
}

# run BIN ARGS...: what BIN prints on both streams, and its exit code.
run() {
  local bin=$1
  shift
  local rc=0
  "$bin" "$@" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null || rc=$?
  echo "\$ flotilla $*"
  cat "$tmp/stdout"
  echo "--- stderr"
  cat "$tmp/stderr"
  echo "--- exit $rc"
}

# outputs BIN: everything compared, for one binary.
outputs() {
  local bin=$1 cmd
  walk "$bin" >"$tmp/out/commands.$2"
  while IFS= read -r cmd; do
    # shellcheck disable=SC2086 # a command is its words
    run "$bin" $cmd --help
    # shellcheck disable=SC2086
    run "$bin" __complete $cmd --
  done <"$tmp/out/commands.$2"
  run "$bin"
  run "$bin" version
  run "$bin" version -o json
  run "$bin" version -o bogus
  run "$bin" get
  run "$bin" get bogus
  run "$bin" get works -o bogus
  run "$bin" get clusters -o bogus
  run "$bin" get clusters --bogus
  run "$bin" create
  run "$bin" create work
  run "$bin" create work w1 --clusters 'Not A Name' -f -
  run "$bin" create placement p1 --count -1
  run "$bin" create placement p1 --prioritizer bogus
  run "$bin" delete
  run "$bin" delete work
  run "$bin" describe
  run "$bin" describe cluster
  run "$bin" accept
  run "$bin" accept --clusters 'Bad_Name'
  run "$bin" join
  run "$bin" join --hub-token bogus --hub-apiserver https://hub:6443 --cluster-name c1
  run "$bin" clusterset bind
  run "$bin" dev up --clusters 0
  run "$bin" dev up --clusters 99
  run "$bin" init --token-ttl -1s
  run "$bin" bogus
  run "$bin" __complete get ""
  run "$bin" __complete create ""
  run "$bin" __complete describe ""
  run "$bin" __complete ""
}

outputs "$tmp/old/flotilla" old >"$tmp/out/old"
outputs "$tmp/new/flotilla" new >"$tmp/out/new"
if ! diff -u "$tmp/out/commands.old" "$tmp/out/commands.new" ||
  ! diff -u --label "flotilla@$REV" --label "flotilla (work tree)" "$tmp/out/old" "$tmp/out/new"; then
  echo "different: see the diff above" >&2
  exit 1
fi
echo "identical: $(wc -l <"$tmp/out/commands.new") commands"
