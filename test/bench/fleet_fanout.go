package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// examplePolicy is the policy scenario (d) binds to every cluster.
const examplePolicy = "/work/shared/examples/policy-namespace.yaml"

// firstWorkTimeout is how long the fan-out waits for the first
// ManifestWork before it says the hub has no ManifestWorkReplicaSet
// controller and moves on.
const firstWorkTimeout = time.Minute

// fanOut creates one ManifestWorkReplicaSet whose Placement chooses every
// cluster and reports when every cluster's ManifestWork exists, and when
// every one is Applied: scenario (c).
func (f *fleet) fanOut(ctx context.Context) error {
	const ns, placement, name = "bench-apps", "everywhere", "fanout"
	if err := f.placeEverywhere(ctx, ns, placement); err != nil {
		return err
	}
	// Simulated clusters share spokes, where agents writing one object
	// would fight over its labels: each reads it (ReadOnly) instead, and
	// reports it Applied as it would have after writing it.
	template := benchManifestWork(ns, name)
	cm := template.Spec.Workload.Manifests[0].Object.(*corev1.ConfigMap)
	for _, kubeconfig := range f.spokeKubeconfigs() {
		spoke, err := adminClient(kubeconfig)
		if err != nil {
			return err
		}
		if err := spoke.Create(ctx, cm.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create the fan-out's ConfigMap on the spoke: %w", err)
		}
	}
	template.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
		ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: cm.Namespace, Name: cm.Name},
		UpdateStrategy:     &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeReadOnly},
	}}
	mwrs := &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			ManifestWorkTemplate:  template.Spec,
			PlacementRefs:         []workv1alpha1.LocalPlacementReference{{Name: placement, RolloutStrategy: workv1alpha1.RolloutStrategy{Type: "All"}}},
			CascadeDeletionPolicy: workv1alpha1.Background,
		},
	}
	stopProfiles := f.profileDuring(ctx, "fanout", 30*time.Second)
	defer stopProfiles()
	meter := f.meterCPU()
	reqBefore := f.requests(ctx)
	started := time.Now()
	if err := f.c.Create(ctx, mwrs); err != nil {
		return fmt.Errorf("create ManifestWorkReplicaSet %s/%s: %w", ns, name, err)
	}
	// The ManifestWorks of a replica set are named after it, as OCM names them.
	keys := keysIn(f.names, name)
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, firstWorkTimeout, true, func(context.Context) (bool, error) {
		_, missing := f.track.times(keys, false)
		return missing < len(keys), nil
	}); err != nil {
		row("(c) fan-out of one ManifestWorkReplicaSet", "not measured", "")
		fmt.Printf("      no ManifestWork %s appeared within %s: this hub runs no ManifestWorkReplicaSet controller\n", name, firstWorkTimeout)
		return nil
	}
	n := len(f.names)
	exist, err := f.track.waitAll(ctx, "fan-out works", keys, false, 10*time.Minute)
	if err != nil {
		return err
	}
	row(fmt.Sprintf("(c) fan-out to %d: every ManifestWork exists", n), seconds(exist.Sub(started)), "< 10 s for 1,000")
	applied, err := f.track.waitAll(ctx, "fan-out works Applied", keys, true, 10*time.Minute)
	if err != nil {
		return err
	}
	row(fmt.Sprintf("(c) fan-out to %d: every ManifestWork Applied", n), seconds(applied.Sub(started)), "< 120 s for 5,000")
	meter.print("(c)")
	f.printRequestsSince(ctx, "(c) fan-out", reqBefore, n)
	return nil
}

// policy creates the example policy bound to every cluster and reports
// when every replicated policy exists, when every cluster reported
// Compliant, and when the root policy's status lists every cluster:
// scenario (d).
func (f *fleet) policy(ctx context.Context) error {
	const ns, placement, name = "policies", "everywhere", "policy-namespace"
	if err := f.placeEverywhere(ctx, ns, placement); err != nil {
		return err
	}
	stopProfiles := f.profileDuring(ctx, "policy", time.Minute)
	defer stopProfiles()
	meter := f.meterCPU()
	reqBefore := f.requests(ctx)
	started := time.Now()
	if _, err := flotilla(ctx, "create", "policy", "--kubeconfig", f.hub.Kubeconfig, "-f", examplePolicy, "-n", ns, "--placement", placement); err != nil {
		return err
	}
	// Replicated policies are named <root namespace>.<root name> in each cluster's namespace.
	keys := keysIn(f.names, ns+"."+name)
	n := len(f.names)
	exist, err := f.track.waitAll(ctx, "replicated policies", keys, false, 10*time.Minute)
	if err != nil {
		return err
	}
	row(fmt.Sprintf("(d) policy to %d: every replicated policy exists", n), seconds(exist.Sub(started)), "< 10 s for 1,000")
	compliant, err := f.track.waitAll(ctx, "replicated policies Compliant", keys, true, 10*time.Minute)
	if err != nil {
		return err
	}
	row(fmt.Sprintf("(d) policy to %d: every cluster reported Compliant", n), seconds(compliant.Sub(started)), "")
	complete, err := f.track.waitRoot(ctx, ns+"/"+name, n, 10*time.Minute)
	if err != nil {
		return err
	}
	row(fmt.Sprintf("(d) policy to %d: root status lists all", n), seconds(complete.Sub(started)), "< 30 s for 1,000")
	meter.print("(d)")
	f.printRequestsSince(ctx, "(d) policy", reqBefore, n)
	return nil
}

// placeEverywhere binds the global cluster set to ns and creates a
// Placement there that chooses every cluster, and waits until its
// decisions list them all.
func (f *fleet) placeEverywhere(ctx context.Context, ns, name string) error {
	if _, err := flotilla(ctx, "clusterset", "bind", "global", "--kubeconfig", f.hub.Kubeconfig, "-n", ns); err != nil {
		return err
	}
	if _, err := flotilla(ctx, "create", "placement", name, "--kubeconfig", f.hub.Kubeconfig, "-n", ns, "--clustersets", "global"); err != nil {
		return err
	}
	var chosen int
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		list := &clusterv1beta1.PlacementDecisionList{}
		if err := f.c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: name}); err != nil {
			return false, nil
		}
		chosen = 0
		for _, d := range list.Items {
			chosen += len(d.Status.Decisions)
		}
		return chosen == len(f.names), nil
	})
	if err != nil {
		return fmt.Errorf("placement %s/%s chose %d of %d clusters: %w", ns, name, chosen, len(f.names), err)
	}
	return nil
}
