package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	clientretry "k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

var (
	rollbackClusters = flag.Int("rollback-clusters", 1000, "rollback: hollow clusters the replica set is rolled out to")
	rollbackGroup    = flag.String("rollback-group", "10%", "rollback: clusters per decision group of the Placement (a number or a percentage); the first group takes the bad revision")
	rollbackWait     = flag.Duration("rollback-wait", 2*time.Minute, "rollback: how long after the first failed gate the hub may take to start rolling back before the benchmark says it does not")
)

// What the rollback scenario rolls out: one Deployment, revision 1 at
// rollbackGood, revision 2 at rollbackBad, which hollow clusters never
// bring up (reportNeverReady).
const (
	rollbackNamespace = "bench-rollback"
	rollbackPlacement = "fleet"
	rollbackName      = "web"
	rollbackGood      = "registry.example/web:1.0"
	rollbackBad       = "registry.example/web" + neverReadyTag
)

// benchRollback rolls a ManifestWorkReplicaSet with automatic rollback out
// to -rollback-clusters hollow clusters one decision group at a time:
// revision 1 until it is complete, then revision 2, whose Deployment never
// becomes ready. It times the first group's failure and, from the first
// failed gate, the hub moving every cluster that took revision 2 back to
// revision 1, with the hub's requests per cluster rolled back, and checks
// that the clusters that never took revision 2 were not written (see
// docs/benchmarks.md, "Rollback").
func benchRollback(ctx context.Context, e *env) error {
	quietKlog()
	var cl cleanups
	defer cl.run()
	n := *rollbackClusters
	f, err := startRollbackFleet(ctx, e, n, &cl)
	if err != nil {
		return err
	}
	groups, err := placeInGroups(ctx, f, rollbackNamespace, rollbackPlacement, *rollbackGroup)
	if err != nil {
		return err
	}
	rw, err := watchRollback(ctx, f.cfg, rollbackNamespace, rollbackName, &cl)
	if err != nil {
		return err
	}
	good, err := rolloutFirstRevision(ctx, f, rw, groups)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, saveOutput(f.hub, nil))
	}
	if err := rolloutBadRevision(ctx, f, rw, good); err != nil {
		return fmt.Errorf("%w\n%s", err, saveOutput(f.hub, nil))
	}
	return nil
}

// startRollbackFleet starts the hub, joins n hollow clusters, accepts them
// and waits until they are Available and in the default ClusterSet.
func startRollbackFleet(ctx context.Context, e *env, n int, cl *cleanups) (*fleet, error) {
	f := &fleet{names: clusterNames("hollow", n)}
	var err error
	if f.hub, err = startHubUnderTest(ctx, e, filepath.Join(e.workDir, "rollback-hub")); err != nil {
		return nil, err
	}
	cl.add(f.hub.Stop)
	bootstrap, err := f.connect(ctx, e, cl)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	stop, err := startHollowAgents(ctx, f.names, bootstrap, f.cfg)
	if err != nil {
		return nil, err
	}
	cl.add(stop)
	if _, err := acceptAll(ctx, f.hub.HubProcess, f.c, f.names); err != nil {
		return nil, err
	}
	inSet := func(mc *clusterv1.ManagedCluster) bool {
		return mc.Labels[clusterv1beta2.ClusterSetLabel] == clusterv1beta2.DefaultManagedClusterSetName
	}
	if err := waitAllClusters(ctx, f.c, f.names, "in the default set", 30*time.Minute, inSet); err != nil {
		return nil, err
	}
	row(fmt.Sprintf("%d hollow clusters joined, accepted, Available", n), seconds(time.Since(started)), "")
	return f, nil
}

// placeInGroups binds the global cluster set to ns and creates a Placement
// there that chooses every cluster in decision groups of perGroup, waits
// until its decisions list them all, and returns how many groups it made.
func placeInGroups(ctx context.Context, f *fleet, ns, name, perGroup string) (int, error) {
	if _, err := flotilla(ctx, "clusterset", "bind", "global", "--kubeconfig", f.hub.Kubeconfig, "-n", ns); err != nil {
		return 0, err
	}
	p := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1beta1.PlacementSpec{
			ClusterSets: []string{"global"},
			DecisionStrategy: clusterv1beta1.DecisionStrategy{GroupStrategy: clusterv1beta1.GroupStrategy{
				ClustersPerDecisionGroup: intstr.Parse(perGroup),
			}},
		},
	}
	if err := f.c.Create(ctx, p); err != nil {
		return 0, fmt.Errorf("create Placement %s/%s: %w", ns, name, err)
	}
	var chosen int
	groups := map[string]bool{}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		list := &clusterv1beta1.PlacementDecisionList{}
		if err := f.c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: name}); err != nil {
			return false, nil
		}
		chosen = 0
		clear(groups)
		for _, d := range list.Items {
			chosen += len(d.Status.Decisions)
			groups[d.Labels[clusterv1beta1.DecisionGroupIndexLabel]] = true
		}
		return chosen == len(f.names), nil
	})
	if err != nil {
		return 0, fmt.Errorf("placement %s/%s chose %d of %d clusters: %w", ns, name, chosen, len(f.names), err)
	}
	return len(groups), nil
}

// rollbackReplicaSet is the replica set at image: one two-replica
// Deployment whose well-known status is reported back, rolled out one
// decision group at a time, rolled back after the first failed cluster,
// with a healthCheck that every replica be available.
func rollbackReplicaSet(image string) *workv1alpha1.ManifestWorkReplicaSet {
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: rollbackName},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": rollbackName}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": rollbackName}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: rollbackName, Image: image}}},
			},
		},
	}
	config := workv1alpha1.RolloutConfig{ProgressDeadline: "5m"}
	return &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: rollbackNamespace, Name: rollbackName},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			ManifestWorkTemplate: workv1.ManifestWorkSpec{
				Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Object: d}}}},
				ManifestConfigs: []workv1.ManifestConfigOption{{
					ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: "default", Name: rollbackName},
					FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
				}},
			},
			PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: rollbackPlacement, RolloutStrategy: workv1alpha1.RolloutStrategy{
				Type:                workv1alpha1.ProgressivePerGroup,
				ProgressivePerGroup: &workv1alpha1.RolloutProgressivePerGroup{RolloutConfig: config},
			}}},
			CascadeDeletionPolicy: workv1alpha1.Background,
			Rollback:              &workv1alpha1.RollbackPolicy{FailedClusters: intstr.FromInt32(1)},
			HealthCheck: &workv1alpha1.HealthCheck{Feedback: []workv1alpha1.FeedbackCheck{
				{Name: "AvailableReplicas", EqualsValue: "Replicas"},
			}},
		},
	}
}

// rolloutFirstRevision creates the replica set at rollbackGood, waits
// until every cluster runs it, and until its revision is recorded
// complete; it returns that revision's ControllerRevision name ("" when
// the hub keeps no revisions).
func rolloutFirstRevision(ctx context.Context, f *fleet, rw *rollbackWatch, groups int) (string, error) {
	n := len(f.names)
	started := time.Now()
	if err := f.c.Create(ctx, rollbackReplicaSet(rollbackGood)); err != nil {
		return "", fmt.Errorf("create ManifestWorkReplicaSet %s/%s: %w", rollbackNamespace, rollbackName, err)
	}
	if err := rw.waitFor(ctx, "every cluster Available on revision 1", 15*time.Minute, func() bool {
		return rw.countOn(rollbackGood, "") == n
	}); err != nil {
		return "", err
	}
	row(fmt.Sprintf("revision 1 to %d clusters, %d groups one at a time: every work Available", n, groups), seconds(time.Since(started)), "")
	var good string
	err := rw.waitFor(ctx, "revision 1 recorded complete", time.Minute, func() bool {
		rev := rw.revision(1)
		if rev != nil && rev.Annotations[workv1alpha1.RevisionCompleteAnnotation] != "" {
			good = rev.Name
		}
		return good != ""
	})
	if err != nil {
		if rw.revision(1) == nil {
			row("revision 1 recorded complete", "no revision", "")
			fmt.Println("      the hub recorded no ControllerRevision of the replica set: it keeps no revisions")
			return "", nil
		}
		return "", err
	}
	row("revision 1 recorded complete (ControllerRevision "+good+")", seconds(time.Since(started)), "")
	return good, nil
}

// rolloutBadRevision changes the replica set to rollbackBad and prints
// when the first cluster failed, how many clusters took it, and when every
// one of them was back on good (revision 1's ControllerRevision name, ""
// when the hub keeps none) and Available again.
func rolloutBadRevision(ctx context.Context, f *fleet, rw *rollbackWatch, good string) error {
	n := len(f.names)
	before := rw.generations()
	rw.setGood(good)
	reqBefore := f.requests(ctx)
	meter := f.meterCPU()
	started := time.Now()
	if err := setReplicaSetImage(ctx, f.c, rollbackBad); err != nil {
		return err
	}
	if err := rw.waitFor(ctx, "the first cluster failing revision 2", 10*time.Minute, func() bool {
		return !rw.firstFailure().IsZero()
	}); err != nil {
		return err
	}
	failed := rw.firstFailure()
	row("revision 2 written → the first cluster fails its gate (Degraded)", seconds(failed.Sub(started)), "")
	// The hub rolls back, or says why not; a hub without automatic
	// rollback stops the rollout and leaves the clusters on revision 2.
	err := rw.waitFor(ctx, "the hub rolling back", *rollbackWait, func() bool {
		return !rw.reasonSeen(workv1alpha1.ReasonRollingBack).IsZero() || !rw.reasonSeen(workv1alpha1.ReasonRolledBack).IsZero() ||
			!rw.reasonSeen(workv1alpha1.ReasonRollbackFailed).IsZero() || !rw.reasonSeen(workv1alpha1.ReasonNoCompleteRevision).IsZero()
	})
	if err != nil {
		took := rw.took()
		row("clusters that took revision 2", fmt.Sprintf("%d of %d", len(took), n), "")
		row("rollback", "not measured", "")
		fmt.Printf("      no RolledBack condition within %s of the first failed gate: this hub does not roll back; the rollout stopped with %d clusters on revision 2\n",
			*rollbackWait, rw.countOn(rollbackBad, ""))
		fmt.Printf("      PlacementRolledOut: %s\n", rw.condition(workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut))
		f.printRequestsSince(ctx, "revision 2 until now", reqBefore, max(1, len(took)))
		return nil
	}
	if at := rw.reasonSeen(workv1alpha1.ReasonRollingBack); !at.IsZero() {
		row("first failed gate → RolledBack=RollingBack on the replica set", seconds(at.Sub(failed)), "")
	}
	if err := rw.waitFor(ctx, "every cluster that took revision 2 back on revision 1", 15*time.Minute, func() bool {
		took := rw.took()
		return len(took) > 0 && rw.countBack(took) == len(took) && !rw.reasonSeen(workv1alpha1.ReasonRolledBack).IsZero()
	}); err != nil {
		fmt.Printf("      RolledBack: %s\n", rw.condition(workv1alpha1.ManifestWorkReplicaSetConditionRolledBack))
		return err
	}
	took := rw.took()
	last := rw.lastBack(took)
	row("clusters that took revision 2", fmt.Sprintf("%d of %d", len(took), n), "")
	row(fmt.Sprintf("first failed gate → all %d back on revision 1 and Available", len(took)), seconds(last.Sub(failed)), "")
	row("first failed gate → RolledBack=RolledBack on the replica set", seconds(rw.reasonSeen(workv1alpha1.ReasonRolledBack).Sub(failed)), "")
	meter.print("revision 2 and its rollback")
	untouched, written := rw.untouched(before, took)
	row("clusters that never took revision 2: works written (generation changed)", fmt.Sprintf("%d of %d", written, untouched), "0")
	fmt.Printf("      RolledBack: %s\n", rw.condition(workv1alpha1.ManifestWorkReplicaSetConditionRolledBack))
	if rev := rw.revision(2); rev != nil {
		fmt.Printf("      revision 2 (%s) %s: %.200s\n", rev.Name, workv1alpha1.RevisionFailedAnnotation, rev.Annotations[workv1alpha1.RevisionFailedAnnotation])
	}
	f.printRequestsSince(ctx, "revision 2 and its rollback", reqBefore, len(took))
	return nil
}

// setReplicaSetImage sets the image of the replica set's Deployment, with
// the replica set's resourceVersion, again on a conflict.
func setReplicaSetImage(ctx context.Context, c client.Client, image string) error {
	return clientretry.RetryOnConflict(clientretry.DefaultRetry, func() error {
		mwrs := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: rollbackNamespace, Name: rollbackName}, mwrs); err != nil {
			return err
		}
		mwrs.Spec.ManifestWorkTemplate = rollbackReplicaSet(image).Spec.ManifestWorkTemplate
		if err := c.Update(ctx, mwrs); err != nil {
			return fmt.Errorf("update ManifestWorkReplicaSet %s/%s to %s: %w", rollbackNamespace, rollbackName, image, err)
		}
		return nil
	})
}

// conditionString is a condition as the benchmark prints it.
func conditionString(c *metav1.Condition) string {
	if c == nil {
		return "(none)"
	}
	return fmt.Sprintf("%s %s: %.300s", c.Status, c.Reason, c.Message)
}

// currentTrue says whether w's condition t is True for w's generation.
func currentTrue(w *workv1.ManifestWork, t string) bool {
	c := meta.FindStatusCondition(w.Status.Conditions, t)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == w.Generation
}
