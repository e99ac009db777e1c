#!/usr/bin/env bash
# make demo: start a sandbox fleet in .demo/ (a Flotilla hub and three
# simulated clusters, each with its agent), deliver the example ManifestWork
# to the dev cluster, fan the example Deployment out to the prod clusters
# with a Placement and a ManifestWorkReplicaSet (another image on one
# cluster, replicas divided 2:1), export it from the prod clusters as a
# multi-cluster service, govern every cluster with the example
# Policy, wait until the clusters run the workloads and comply, and print
# what the hub knows.
# The sandbox keeps running; `make demo-down` stops it and removes .demo/.
# docs/demo.md walks through the same steps.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/bin}
DEMO=${DEMO_DIR:-$PWD/.demo}
EXAMPLES=${EXAMPLES:-$PWD/../shared/examples}
CLUSTERS=cluster1,cluster2,cluster3
DEV_CLUSTER=cluster2             # env=dev; cluster1 and cluster3 are env=prod
PROD_CLUSTERS="cluster1 cluster3"
WORK=awesome-workload
REPLICASET=hello
REGIONAL_IMAGE=registry.ap-south.example.com/busybox:1.36
start=$(date +%s.%N)

flotilla() { "$BIN/flotilla" "$@"; }
# FLOTILLA is flotilla as the commands the demo shows are typed, from the
# directory make demo runs in: "flotilla" when that is the one on PATH,
# else its path (bin/flotilla).
if [[ $(type -P flotilla) -ef $BIN/flotilla ]]; then
  FLOTILLA=flotilla
else
  FLOTILLA=${BIN#"$PWD"/}/flotilla
fi
if [[ -t 1 ]]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s==> %s%s\n' "$bold" "$*" "$plain"; }
# fail stops the demo, saying what failed and showing the end of the logs.
fail() {
  echo >&2
  echo "make demo failed: $*" >&2
  for log in "$DEMO"/*.log; do
    [[ -f $log ]] || continue
    echo "--- last lines of $log:" >&2
    tail -n 8 "$log" >&2
  done
  echo >&2
  echo "The sandbox is left as it is for a look; remove it with: make demo-down" >&2
  exit 1
}

# dev up on a sandbox that exists would only restart what of it stopped;
# the demo's steps are for a new one.
if [[ -e $DEMO/state.json ]]; then
  echo "make demo: a sandbox already exists in $DEMO: see it with \`$FLOTILLA dev status --dir $DEMO\`, restart what stopped with \`$FLOTILLA dev up --dir $DEMO\`, or remove it with \`make demo-down\` before a new demo" >&2
  exit 1
fi

step "Starting a hub and 3 simulated clusters in $DEMO ($FLOTILLA dev up)"
# dev up prints its own failure with the end of the failing log, and removes
# what it started.
flotilla dev up --dir "$DEMO" --clusters 3 || { echo "make demo failed: flotilla dev up (see above)" >&2; exit 1; }
export KUBECONFIG=$DEMO/hub/admin.kubeconfig

# The example ManifestWork has no status feedback rules, and `create work`
# uses a ManifestWork's spec as it is: so that the agents report the
# Deployment's AvailableReplicas, the demo delivers the example with one
# WellKnownStatus rule added.
work_file=$DEMO/manifestwork-hello.yaml
{
  cat "$EXAMPLES/manifestwork-hello.yaml"
  cat <<'RULES'
  manifestConfigs:
    - resourceIdentifier:
        group: apps
        resource: deployments
        namespace: default
        name: hello
      feedbackRules:
        - type: WellKnownStatus
RULES
} >"$work_file" || fail "cannot write $work_file"

step "Delivering $WORK to $DEV_CLUSTER and waiting until it runs it"
echo "\$ $FLOTILLA create work $WORK -f $work_file --clusters $DEV_CLUSTER --wait"
flotilla create work "$WORK" -f "$work_file" --clusters "$DEV_CLUSTER" --wait --timeout 2m \
  || fail "ManifestWork $WORK did not become applied and available on $DEV_CLUSTER"

# The example Deployment sets no replicas; the replica set divides 3.
rs_file=$DEMO/hello-replicas.yaml
sed '0,/^        spec:$/s//        spec:\n          replicas: 3/' "$work_file" >"$rs_file" || fail "cannot write $rs_file"

step "Fanning the example Deployment out to the env=prod clusters: a Placement and a ManifestWorkReplicaSet"
echo "\$ $FLOTILLA clusterset bind global -n apps"
flotilla clusterset bind global -n apps || fail "cannot bind cluster set global to namespace apps"
echo "\$ $FLOTILLA create placement prod -n apps --clustersets global --label-selectors env=prod --wait"
flotilla create placement prod -n apps --clustersets global --label-selectors env=prod --wait || fail "cannot create Placement apps/prod"
echo "\$ $FLOTILLA create work $REPLICASET -f $rs_file --placement apps/prod --replicas 3 --weight cluster1=2 --image cluster3=$REGIONAL_IMAGE --wait"
flotilla create work "$REPLICASET" -f "$rs_file" --placement apps/prod --replicas 3 --weight cluster1=2 --image "cluster3=$REGIONAL_IMAGE" --wait --timeout 2m \
  || fail "ManifestWorkReplicaSet apps/$REPLICASET did not roll out to the prod clusters"

# The agent reports status feedback on its next status pass: wait for it.
for c in $DEV_CLUSTER $PROD_CLUSTERS; do
  w=$REPLICASET
  [[ $c == "$DEV_CLUSTER" ]] && w=$WORK
  for _ in $(seq 1 60); do
    flotilla get works "$w" --clusters "$c" -o json | grep -q '"AvailableReplicas"' && break
    sleep 0.5
  done
done

# One multi-cluster service: the hello pods of the prod clusters behind a
# Service, exported from both; every cluster of their set (default, an
# exclusive set: the hub puts each cluster there) imports it.
svc_file=$DEMO/hello-service.yaml
cat >"$svc_file" <<'SERVICE' || fail "cannot write $svc_file"
apiVersion: v1
kind: Service
metadata:
  name: hello
  namespace: default
spec:
  selector:
    app: hello
  ports:
    - name: http
      port: 8080
---
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceExport
metadata:
  name: hello
  namespace: default
SERVICE

step "Exporting Service default/hello from the env=prod clusters: every cluster of their set imports it"
echo "\$ $FLOTILLA create work hello-service -f $svc_file --clusters ${PROD_CLUSTERS// /,} --wait"
flotilla create work hello-service -f "$svc_file" --clusters "${PROD_CLUSTERS// /,}" --wait --timeout 2m \
  || fail "ManifestWork hello-service did not become applied and available on $PROD_CLUSTERS"
# The agents report the export with its endpoints, the hub merges: wait for
# both exporters and their 3 ready endpoints.
imported=
for _ in $(seq 1 60); do
  if flotilla get serviceimports hello -n default 2>/dev/null | grep -Eq 'cluster1,cluster3 +cluster1,cluster2,cluster3 +3/3'; then
    imported=yes
    break
  fi
  sleep 0.5
done
[[ -n $imported ]] || fail "Service default/hello was not imported by every cluster with the endpoints of cluster1 and cluster3 (see $FLOTILLA get serviceexports)"

step "Governing every cluster with $EXAMPLES/policy-namespace.yaml (namespace prod must exist; enforce)"
echo "\$ $FLOTILLA clusterset bind global -n policies"
flotilla clusterset bind global -n policies || fail "cannot bind cluster set global to namespace policies"
echo "\$ $FLOTILLA create placement everywhere -n policies --clustersets global"
flotilla create placement everywhere -n policies --clustersets global || fail "cannot create Placement policies/everywhere"
echo "\$ $FLOTILLA create policy -f $EXAMPLES/policy-namespace.yaml --placement everywhere --wait"
flotilla create policy -f "$EXAMPLES/policy-namespace.yaml" --placement everywhere --wait --timeout 2m \
  || fail "Policy policy-namespace did not become Compliant on $CLUSTERS"

took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.0f", e - s }')
step "Summary (${took}s)"
echo "Clusters, as the hub sees them ($FLOTILLA get clusters -o wide):"
flotilla get clusters -o wide | sed 's/^/    /'
echo
echo "Placements and the clusters they chose ($FLOTILLA get placements):"
flotilla get placements | sed 's/^/    /'
echo
echo "ManifestWorkReplicaSets with their rollout, then each cluster's ManifestWorks as its agent reports them ($FLOTILLA get works):"
flotilla get works | sed 's/^/    /; s/^ *$//'
echo
echo "What each prod cluster runs: its share of the replicas and its image ($FLOTILLA describe work $REPLICASET -n apps):"
flotilla describe work "$REPLICASET" -n apps | sed -n '/^Clusters:/,$p' | sed 's/^/    /'
echo
echo "The exported service, per exporting cluster, then as its set imports it ($FLOTILLA get serviceexports; $FLOTILLA get serviceimports):"
flotilla get serviceexports | sed 's/^/    /'
echo
flotilla get serviceimports | sed 's/^/    /'
echo
echo "Policy compliance per cluster ($FLOTILLA get policies -n policies --matrix):"
flotilla get policies -n policies --matrix | sed 's/^/    /'
echo
for c in ${CLUSTERS//,/ }; do
  kc=$DEMO/$c/admin.kubeconfig
  echo "Deployment hello on $c (kubectl --kubeconfig $kc get deployment hello -o wide):"
  if command -v kubectl >/dev/null; then
    kubectl --kubeconfig "$kc" get deployment hello -n default -o wide 2>&1 | sed 's/^/    /'
  else
    echo "    (kubectl is not installed)"
  fi
done

cat <<MSG

The sandbox keeps running. Explore it:
    export KUBECONFIG=$KUBECONFIG
    $FLOTILLA get clusters -o wide
    $FLOTILLA get works -o wide
    $FLOTILLA describe work $REPLICASET -n apps
    $FLOTILLA describe serviceimport default/hello
    $FLOTILLA get works --clusters cluster3 $REPLICASET -o yaml
    kubectl --kubeconfig $DEMO/cluster1/admin.kubeconfig get deployments,pods -A
    $FLOTILLA kubeconfig --cluster cluster1 --output-file $DEMO/c1-via-hub.kubeconfig
    kubectl --kubeconfig $DEMO/c1-via-hub.kubeconfig get deployments -A   # through the hub's cluster proxy
    $FLOTILLA dev status      # of the sandbox that KUBECONFIG points into
    $FLOTILLA console     # the web console: open the URL it prints
Logs: $DEMO/*.log
Stop it and remove $DEMO:  make demo-down
MSG
