package workview

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/hub/workreplicaset"
	"github.com/flotilla-io/flotilla/hub/workreplicaset/health"
	"github.com/flotilla-io/flotilla/hub/workreplicaset/render"
)

// Lacking lists, per cluster not yet available (only those in phase, if
// given), what it lacks.
func (v *ReplicaSetView) Lacking(phase ClusterPhase) []string {
	var out []string
	for _, cr := range v.Clusters {
		if cr.Phase == PhaseAvailable || (phase != "" && cr.Phase != phase) {
			continue
		}
		out = append(out, fmt.Sprintf("cluster %s: %s", cr.Cluster, cr.Why))
	}
	if phase == "" && len(out) == 0 {
		if c := meta.FindStatusCondition(v.ReplicaSet.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut); c == nil || c.Status != metav1.ConditionTrue {
			out = append(out, "the hub has not reported the rollout complete yet (PlacementRolledOut)")
		}
	}
	return out
}

// ClusterNames are the chosen clusters of the view.
func (v *ReplicaSetView) ClusterNames() []string {
	out := make([]string, 0, len(v.Clusters))
	for _, cr := range v.Clusters {
		out = append(out, cr.Cluster)
	}
	return out
}

// ClusterPhase is where one chosen cluster stands in a replica set's rollout.
type ClusterPhase string

const (
	// PhasePending: the cluster has no ManifestWork yet, or one with an
	// older spec, and waits for its turn.
	PhasePending ClusterPhase = "Pending"
	// PhaseApplying: the cluster has the current spec, and its agent has
	// not reported it Applied and Available yet.
	PhaseApplying ClusterPhase = "Applying"
	// PhaseAvailable: the cluster runs the current spec.
	PhaseAvailable ClusterPhase = "Available"
	// PhaseFailed: the cluster has the current spec and reports it
	// Degraded, or did not become available within progressDeadline.
	PhaseFailed ClusterPhase = "Failed"
)

// ClusterRollout is one chosen cluster of a replica set, as the CLI shows it.
type ClusterRollout struct {
	Cluster   string
	placement string
	work      *workv1.ManifestWork
	// want is the ManifestWork spec the cluster should get (overrides and
	// division applied); nil when the spec cannot be rendered.
	want  *workv1.ManifestWorkSpec
	Phase ClusterPhase
	// Why says what the cluster lacks or why it failed; empty when available.
	Why string
}

// ReplicaSetView is a replica set with what its clusters have.
type ReplicaSetView struct {
	ReplicaSet *workv1alpha1.ManifestWorkReplicaSet
	// Clusters are the chosen clusters, by Placement then name.
	Clusters []ClusterRollout
	// orphans are ManifestWorks of clusters no Placement chooses any more.
	orphans []*workv1.ManifestWork
	// RenderErr says why the overrides or the division cannot apply.
	RenderErr error
}

// LoadReplicaSetView reads what a replica set's clusters have: the
// decisions of its Placements, its ManifestWorks (by label) and the
// clusters' labels, to render each cluster's spec as the hub does.
func LoadReplicaSetView(ctx context.Context, c *cmdutil.Clients, rs *workv1alpha1.ManifestWorkReplicaSet, now time.Time) (*ReplicaSetView, error) {
	works := &workv1.ManifestWorkList{}
	owner := rs.Namespace + "." + rs.Name
	if err := c.Ctrl.List(ctx, works, client.MatchingLabels{workv1.ManifestWorkReplicaSetLabel: owner}); err != nil {
		return nil, cmdutil.ExplainClusterAPI(err, c, "list the ManifestWorks of ManifestWorkReplicaSet "+rs.Namespace+"/"+rs.Name)
	}
	placementOf := map[string]string{}
	var chosen []string
	for _, ref := range rs.Spec.PlacementRefs {
		p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: rs.Namespace, Name: ref.Name}}
		names, err := cmdutil.PlacementClusters(ctx, c, p)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if _, ok := placementOf[n]; !ok {
				placementOf[n] = ref.Name
				chosen = append(chosen, n)
			}
		}
	}
	clusters := &clusterv1.ManagedClusterList{}
	if len(chosen) > 0 {
		if err := c.Ctrl.List(ctx, clusters); err != nil {
			return nil, cmdutil.ExplainClusterAPI(err, c, "list ManagedClusters")
		}
	}
	return buildReplicaSetView(rs, chosen, placementOf, clusters.Items, works.Items, now), nil
}

// buildReplicaSetView classifies each chosen cluster; chosen is in the
// Placements' order, placementOf maps a cluster to the Placement that chose it.
func buildReplicaSetView(rs *workv1alpha1.ManifestWorkReplicaSet, chosen []string, placementOf map[string]string, managed []clusterv1.ManagedCluster, works []workv1.ManifestWork, now time.Time) *ReplicaSetView {
	v := &ReplicaSetView{ReplicaSet: rs}
	var targets []render.Cluster
	for _, name := range chosen {
		t := render.Cluster{Name: name}
		if i := slices.IndexFunc(managed, func(mc clusterv1.ManagedCluster) bool { return mc.Name == name }); i >= 0 {
			t.Labels = managed[i].Labels
			t.Allocatable = toCoreResources(managed[i].Status.Allocatable)
		}
		targets = append(targets, t)
	}
	var rendered map[string]workv1.ManifestWorkSpec
	if len(targets) > 0 {
		rendered, v.RenderErr = render.Plan(&rs.Spec, targets)
	}
	byCluster := map[string]*workv1.ManifestWork{}
	for i := range works {
		byCluster[works[i].Namespace] = &works[i]
	}
	for _, name := range chosen {
		cr := ClusterRollout{Cluster: name, placement: placementOf[name], work: byCluster[name]}
		if spec, ok := rendered[name]; ok {
			cr.want = &spec
		}
		cr.Phase, cr.Why = classifyCluster(cr, rs.Spec.HealthCheck, deadlineOf(rs, cr.placement), now)
		v.Clusters = append(v.Clusters, cr)
		delete(byCluster, name)
	}
	for _, w := range byCluster {
		v.orphans = append(v.orphans, w)
	}
	slices.SortFunc(v.orphans, func(a, b *workv1.ManifestWork) int { return strings.Compare(a.Namespace, b.Namespace) })
	return v
}

// healthChecker checks the replica sets' spec.healthCheck as the hub does.
var healthChecker = health.NewChecker()

// classifyCluster says where a cluster stands and why, as the hub's
// rollout counts it: a cluster succeeds once its agent reports the current
// spec Applied and Available and hc holds, and fails when it reports it
// Degraded or has not succeeded deadline after the hub wrote it.
func classifyCluster(cr ClusterRollout, hc *workv1alpha1.HealthCheck, deadline time.Duration, now time.Time) (ClusterPhase, string) {
	w := cr.work
	switch {
	case w == nil:
		return PhasePending, "no ManifestWork yet: waiting for its turn in the rollout"
	case cr.want != nil && !workreplicaset.SpecEqual(&w.Spec, cr.want):
		return PhasePending, "has the previous spec: waiting for its turn in the rollout"
	case w.DeletionTimestamp != nil:
		return PhasePending, "its ManifestWork is being deleted"
	}
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkDegraded); c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration >= w.Generation {
		return PhaseFailed, "Degraded: " + c.Message
	}
	missing := WorkMissing(w, w.Generation)
	if len(missing) == 0 {
		// As the hub counts it: only conditions observed for the current
		// generation say anything about the current spec.
		for _, t := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
			if meta.FindStatusCondition(w.Status.Conditions, t).ObservedGeneration != w.Generation {
				missing = append(missing, "its agent has not reported on the current spec yet")
				break
			}
		}
	}
	if len(missing) == 0 {
		if r := healthChecker.Check(hc, w); !r.Healthy {
			missing = append(missing, "its health check does not hold: "+r.Message)
		}
	}
	if len(missing) == 0 {
		return PhaseAvailable, ""
	}
	if deadline > 0 {
		if !now.Before(workreplicaset.PushedAt(w).Add(deadline)) {
			return PhaseFailed, fmt.Sprintf("not Available within progressDeadline %s: %s", deadline, missing[0])
		}
	}
	what, _ := cmdutil.SplitHint(missing[0])
	return PhaseApplying, what
}

// strategyOf is the rollout strategy of a Placement of the replica set.
func strategyOf(rs *workv1alpha1.ManifestWorkReplicaSet, placement string) workv1alpha1.RolloutStrategy {
	for _, ref := range rs.Spec.PlacementRefs {
		if ref.Name == placement {
			return ref.RolloutStrategy
		}
	}
	return workv1alpha1.RolloutStrategy{}
}

// rolloutConfig is the timing and failure budget of a strategy.
func rolloutConfig(s workv1alpha1.RolloutStrategy) workv1alpha1.RolloutConfig {
	switch {
	case s.Type == workv1alpha1.Progressive && s.Progressive != nil:
		return s.Progressive.RolloutConfig
	case s.Type == workv1alpha1.ProgressivePerGroup && s.ProgressivePerGroup != nil:
		return s.ProgressivePerGroup.RolloutConfig
	case s.All != nil:
		return s.All.RolloutConfig
	}
	return workv1alpha1.RolloutConfig{}
}

// deadlineOf is the progressDeadline of a Placement's strategy; zero is None.
func deadlineOf(rs *workv1alpha1.ManifestWorkReplicaSet, placement string) time.Duration {
	d, err := time.ParseDuration(rolloutConfig(strategyOf(rs, placement)).ProgressDeadline)
	if err != nil {
		return 0
	}
	return d
}

// maxFailuresOf resolves a Placement's maxFailures against its cluster count.
func maxFailuresOf(rs *workv1alpha1.ManifestWorkReplicaSet, placement string, total int) int {
	s := strategyOf(rs, placement)
	if s.Type == "" || s.Type == workv1alpha1.All {
		return math.MaxInt // All sends everything at once: a failure holds nothing back
	}
	mf := rolloutConfig(s).MaxFailures
	if mf.Type == intstr.String {
		n, _ := intstr.GetScaledValueFromIntOrPercent(&mf, total, false)
		return n
	}
	return mf.IntValue()
}

// Rollout sums the view up: Complete, Stopped (a progressive rollout
// holds back clusters because too many failed), the reason of condition
// RolledBack when the current revision failed (RollingBack, RolledBack,
// ...), or Progressing with how many clusters run the current spec. The
// hub's own word (the PlacementRolledOut condition) decides completeness.
func (v *ReplicaSetView) Rollout() string {
	rs := v.ReplicaSet
	if c := meta.FindStatusCondition(rs.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified); c != nil && c.Status != metav1.ConditionTrue {
		switch c.Reason {
		case workv1alpha1.ReasonPlacementDecisionEmpty:
			return "Waiting: no cluster chosen"
		case workv1alpha1.ReasonPlacementDecisionNotFound:
			return "Waiting: Placement not found"
		}
		return "Waiting: " + c.Reason
	}
	if v.RenderErr != nil {
		return "Invalid: see describe"
	}
	if rb := RollbackCondition(rs); rb != nil {
		// The current revision failed: where its rollback stands says more
		// than its own rollout (see flotilla rollout history).
		return rb.Reason
	}
	var available, pending int
	failed := map[string][]string{}
	perPlacement := map[string]int{}
	for _, cr := range v.Clusters {
		perPlacement[cr.placement]++
		switch cr.Phase {
		case PhaseAvailable:
			available++
		case PhasePending:
			pending++
		case PhaseFailed:
			failed[cr.placement] = append(failed[cr.placement], cr.Cluster)
		}
	}
	var failedNames []string
	stopped := false
	for _, ref := range rs.Spec.PlacementRefs {
		failedNames = append(failedNames, failed[ref.Name]...)
		if len(failed[ref.Name]) > maxFailuresOf(rs, ref.Name, perPlacement[ref.Name]) {
			stopped = true
		}
	}
	rolled := meta.FindStatusCondition(rs.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)
	// A stop for a pause is the hub's word only while the pause lasts: just
	// after a resume the condition still says so until the hub's next pass.
	stalePause := rolled != nil && strings.Contains(rolled.Message, workv1alpha1.PausedAnnotation) && !Paused(rs)
	if rolled != nil && rolled.Status != metav1.ConditionTrue && rolled.ObservedGeneration >= rs.Generation && strings.Contains(rolled.Message, "rollout stopped") && !stalePause {
		// The hub's word: its count may differ from ours (minSuccessTime,
		// mandatory groups), and it holds even when nothing is left to push.
		return "Stopped: " + cmp.Or(strings.Join(failedNames, ","), "clusters") + " failed"
	}
	switch {
	case len(v.Clusters) == 0 && rolled == nil:
		return "Waiting: not scheduled yet"
	case stopped && pending > 0:
		return "Stopped: " + strings.Join(failedNames, ",") + " failed"
	case rolled != nil && rolled.Status == metav1.ConditionTrue && rolled.ObservedGeneration >= rs.Generation && available == len(v.Clusters):
		// The hub's word, and every cluster's agent reports the current spec.
		return "Complete"
	}
	s := fmt.Sprintf("Progressing %d/%d", available, len(v.Clusters))
	if len(failedNames) > 0 {
		s += " (" + strings.Join(failedNames, ",") + " failed)"
	}
	return s
}

// held is what the cluster runs, as its ManifestWork holds it, and the
// message to show with it. A Pending cluster keeps the previous spec until
// its turn: its replicas and images are those of its work ("-" without
// one), and the message says what it gets next.
func (cr ClusterRollout) held() (replicas, images, message string) {
	if cr.Phase != PhasePending || cr.want == nil {
		replicas, images = ReplicasAndImages(cr.want)
		return replicas, images, cr.Why
	}
	replicas, images = "-", "-"
	if cr.work != nil {
		replicas, images = ReplicasAndImages(&cr.work.Spec)
	}
	nextReplicas, nextImages := ReplicasAndImages(cr.want)
	if nextReplicas == replicas && nextImages == images {
		return replicas, images, cr.Why
	}
	return replicas, images, fmt.Sprintf("%s; next: replicas %s, images %s", cr.Why, nextReplicas, nextImages)
}

// ReplicasAndImages sums up what a rendered spec runs: the spec.replicas
// and container images of its manifests, e.g. "2", "nginx:1.27".
func ReplicasAndImages(spec *workv1.ManifestWorkSpec) (replicas, images string) {
	if spec == nil {
		return "?", "?"
	}
	var reps, imgs []string
	for _, m := range spec.Workload.Manifests {
		var obj struct {
			Spec struct {
				Replicas *int64 `json:"replicas"`
				Template struct {
					Spec struct {
						InitContainers []struct{ Image string } `json:"initContainers"`
						Containers     []struct{ Image string } `json:"containers"`
					} `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
		}
		if json.Unmarshal(m.Raw, &obj) != nil {
			continue
		}
		if obj.Spec.Replicas != nil {
			reps = append(reps, strconv.FormatInt(*obj.Spec.Replicas, 10))
		}
		for _, c := range append(obj.Spec.Template.Spec.InitContainers, obj.Spec.Template.Spec.Containers...) {
			if c.Image != "" && !slices.Contains(imgs, c.Image) {
				imgs = append(imgs, c.Image)
			}
		}
	}
	return cmp.Or(strings.Join(reps, ","), "-"), cmp.Or(strings.Join(imgs, ","), "-")
}

// toCoreResources converts a cluster's allocatable to the core type render takes.
func toCoreResources(l clusterv1.ResourceList) corev1.ResourceList {
	if l == nil {
		return nil
	}
	out := make(corev1.ResourceList, len(l))
	for k, v := range l {
		out[corev1.ResourceName(k)] = v
	}
	return out
}
