#!/usr/bin/env bash
# make demo: start a Flotilla hub in .demo/, show that it serves the OCM APIs
# and accepts the brief's ManifestWork, and say how to explore and stop it.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/bin}
DEMO=${DEMO_DIR:-$PWD/.demo}
PORT=${DEMO_PORT:-6443}
EXAMPLES=${EXAMPLES:-$PWD/../shared/examples}

if [[ -f $DEMO/hub.pid ]] && kill -0 "$(cat "$DEMO/hub.pid")" 2>/dev/null; then
  echo "A demo hub is already running (pid $(cat "$DEMO/hub.pid")); stop it with: make demo-down" >&2
  exit 1
fi
mkdir -p "$DEMO"
echo "==> Starting flotilla-hub (data in $DEMO/hub, log in $DEMO/hub.log)"
"$BIN/flotilla-hub" --data-dir "$DEMO/hub" --secure-port "$PORT" \
  --metrics-bind-address 0 --health-probe-bind-address 0 >"$DEMO/hub.log" 2>&1 &
echo $! >"$DEMO/hub.pid"
for _ in $(seq 1 600); do
  grep -q "flotilla-hub is ready" "$DEMO/hub.log" && break
  if ! kill -0 "$(cat "$DEMO/hub.pid")" 2>/dev/null; then
    echo "flotilla-hub exited; the last lines of its log:" >&2; tail -20 "$DEMO/hub.log" >&2; exit 1
  fi
  sleep 0.1
done
grep -q "flotilla-hub is ready" "$DEMO/hub.log" || { echo "flotilla-hub was not ready after 60 s; see $DEMO/hub.log" >&2; exit 1; }
export KUBECONFIG=$DEMO/hub/admin.kubeconfig
echo "==> Hub ready at https://127.0.0.1:$PORT"

if command -v kubectl >/dev/null; then
  echo "==> OCM APIs served by the hub:"
  kubectl api-resources -o name | grep open-cluster-management.io | sed 's/^/    /'
  echo "==> Applying $EXAMPLES/manifestwork-hello.yaml into namespace cluster1"
  kubectl create namespace cluster1 --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl apply -f "$EXAMPLES/manifestwork-hello.yaml"
  kubectl get manifestworks -n cluster1
fi

cat <<MSG

The hub keeps running. Explore it:
  export KUBECONFIG=$KUBECONFIG
  kubectl api-resources --api-group=cluster.open-cluster-management.io
  kubectl get manifestworks -A
Stop it and remove its data:  make demo-down
MSG
