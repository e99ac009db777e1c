package workview

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// ListReplicaSets lists the replica sets of namespace (every one when
// empty), only those named name when given, sorted.
func ListReplicaSets(ctx context.Context, c *cmdutil.Clients, namespace, name string) ([]workv1alpha1.ManifestWorkReplicaSet, error) {
	list := &workv1alpha1.ManifestWorkReplicaSetList{}
	var opts []client.ListOption
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := c.Ctrl.List(ctx, list, opts...); err != nil {
		return nil, cmdutil.ExplainClusterAPI(err, c, "list ManifestWorkReplicaSets")
	}
	items := slices.DeleteFunc(list.Items, func(rs workv1alpha1.ManifestWorkReplicaSet) bool { return name != "" && rs.Name != name })
	slices.SortFunc(items, func(a, b workv1alpha1.ManifestWorkReplicaSet) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return items, nil
}

// ReplicaSetTable renders replica sets with their rollout progress:
// CLUSTERS is how many clusters their Placements chose, UPDATED, APPLIED,
// AVAILABLE and DEGRADED count their ManifestWorks as the hub summed them
// up, ROLLOUT is where the rollout stands. wide adds the strategies and
// the hub's messages.
func ReplicaSetTable(views []*ReplicaSetView, now time.Time, wide bool) (header []string, rows [][]string) {
	header = []string{"NAMESPACE", "NAME", "PLACEMENTS", "CLUSTERS", "UPDATED", "APPLIED", "AVAILABLE", "DEGRADED", "ROLLOUT", "AGE"}
	if wide {
		header = append(header, "STRATEGY", "MESSAGE")
	}
	for _, v := range views {
		rs, sum := v.ReplicaSet, v.ReplicaSet.Status.Summary
		var placements, strategies []string
		for _, ref := range rs.Spec.PlacementRefs {
			placements = append(placements, ref.Name)
			strategies = append(strategies, ref.Name+": "+StrategyText(ref.RolloutStrategy))
		}
		row := []string{rs.Namespace, rs.Name, strings.Join(placements, ","), strconv.Itoa(len(v.Clusters)),
			strconv.Itoa(sum.Updated), strconv.Itoa(sum.Applied), strconv.Itoa(sum.Available), strconv.Itoa(sum.Degraded),
			v.Rollout(), cmdutil.AgeColumn(rs.CreationTimestamp, now)}
		if wide {
			msg := conditionMessages(rs.Status.Conditions)
			if v.RenderErr != nil {
				msg = v.RenderErr.Error()
			}
			row = append(row, strings.Join(strategies, "; "), msg)
		}
		rows = append(rows, row)
	}
	return header, rows
}

// ReplicaSetViews loads the view of each replica set.
func ReplicaSetViews(ctx context.Context, c *cmdutil.Clients, items []workv1alpha1.ManifestWorkReplicaSet, now time.Time) ([]*ReplicaSetView, error) {
	views := make([]*ReplicaSetView, 0, len(items))
	for i := range items {
		v, err := LoadReplicaSetView(ctx, c, &items[i], now)
		if err != nil {
			return nil, err
		}
		views = append(views, v)
	}
	return views, nil
}

// WriteReplicaSetDescription writes what `describe work` shows.
func WriteReplicaSetDescription(w io.Writer, v *ReplicaSetView) error {
	rs := v.ReplicaSet
	fmt.Fprintf(w, "Name:         %s\nNamespace:    %s\nRollout:      %s\n", rs.Name, rs.Namespace, v.Rollout())
	fmt.Fprintln(w, "Placements:")
	for _, ref := range rs.Spec.PlacementRefs {
		fmt.Fprintf(w, "  %s (%s)\n", ref.Name, StrategyText(ref.RolloutStrategy))
	}
	if len(rs.Spec.Overrides) > 0 {
		fmt.Fprintln(w, "Overrides:")
		for i, o := range rs.Spec.Overrides {
			fmt.Fprintf(w, "  %s\n", overrideText(i, o))
		}
	}
	if d := rs.Spec.ReplicaDivision; d != nil {
		fmt.Fprintf(w, "Division:     %s\n", DivisionText(d))
	}
	if v.RenderErr != nil {
		fmt.Fprintf(w, "Invalid:      %v\n", v.RenderErr)
	}
	s := rs.Status.Summary
	fmt.Fprintf(w, "Summary:      %d of %d ManifestWorks exist, %d updated, %d applied, %d available, %d degraded, %d progressing\n",
		s.Total, s.DesiredTotal, s.Updated, s.Applied, s.Available, s.Degraded, s.Progressing)
	fmt.Fprintln(w, "Conditions:")
	if len(rs.Status.Conditions) == 0 {
		fmt.Fprintln(w, "  (none yet: is the hub's ManifestWorkReplicaSet controller running?)")
	} else {
		rows := make([][]string, 0, len(rs.Status.Conditions))
		for _, c := range rs.Status.Conditions {
			rows = append(rows, []string{"  " + c.Type, string(c.Status), c.Reason, cmdutil.OrDash(c.Message)})
		}
		if err := cmdutil.PrintTable(w, []string{"  TYPE", "STATUS", "REASON", "MESSAGE"}, rows); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "Clusters:")
	if len(v.Clusters) == 0 {
		fmt.Fprintln(w, "  (none chosen: see flotilla get placements -n "+rs.Namespace+")")
	} else {
		rows := make([][]string, 0, len(v.Clusters))
		for _, cr := range v.Clusters {
			replicas, images, message := cr.held()
			var conds []metav1.Condition
			if cr.work != nil {
				conds = cr.work.Status.Conditions
			}
			rows = append(rows, []string{"  " + cr.Cluster, cr.placement, string(cr.Phase), replicas, images,
				WorkConditionColumn(conds, "Applied"), WorkConditionColumn(conds, "Available"), cmdutil.OrDash(message)})
		}
		if err := cmdutil.PrintTable(w, []string{"  CLUSTER", "PLACEMENT", "STATE", "REPLICAS", "IMAGES", "APPLIED", "AVAILABLE", "MESSAGE"}, rows); err != nil {
			return err
		}
	}
	for _, o := range v.orphans {
		fmt.Fprintf(w, "  (cluster %s still has ManifestWork %s, though no Placement chooses it any more)\n", o.Namespace, o.Name)
	}
	return nil
}

// overrideText says an override briefly: whom it selects and what it changes.
func overrideText(i int, o workv1alpha1.ClusterOverride) string {
	name := cmp.Or(o.Name, "#"+strconv.Itoa(i))
	var who []string
	if len(o.ClusterNames) > 0 {
		who = append(who, strings.Join(o.ClusterNames, ","))
	}
	if o.ClusterSelector != nil {
		who = append(who, metav1.FormatLabelSelector(o.ClusterSelector))
	}
	var what []string
	for _, im := range o.Images {
		target := "every container"
		if im.Container != "" {
			target = "container " + im.Container
		}
		if im.Tag != "" {
			what = append(what, target+" tag "+im.Tag)
		} else {
			what = append(what, target+" image "+im.Image)
		}
	}
	if o.Replicas != nil {
		what = append(what, fmt.Sprintf("replicas %d", *o.Replicas))
	}
	for _, e := range o.Env {
		what = append(what, "env "+e.Name+"="+e.Value)
	}
	if n := len(o.Labels) + len(o.Annotations); n > 0 {
		what = append(what, cmdutil.Plural(n, "label/annotation"))
	}
	if n := len(o.JSONPatch); n > 0 {
		what = append(what, cmdutil.Plural(n, "JSON patch operation"))
	}
	return fmt.Sprintf("%s: clusters %s: %s", name, cmdutil.OrNone(strings.Join(who, " or ")), cmdutil.OrNone(strings.Join(what, "; ")))
}

// replicaSetData is what `describe work -o json|yaml` prints.
type replicaSetData struct {
	ReplicaSet *workv1alpha1.ManifestWorkReplicaSet `json:"replicaSet"`
	Rollout    string                               `json:"rollout"`
	Invalid    string                               `json:"invalid,omitempty"`
	Clusters   []clusterData                        `json:"clusters"`
}

// clusterData is one chosen cluster of replicaSetData.
type clusterData struct {
	Cluster      string               `json:"cluster"`
	Placement    string               `json:"placement"`
	State        ClusterPhase         `json:"state"`
	Replicas     string               `json:"replicas"`
	Images       string               `json:"images"`
	Message      string               `json:"message,omitempty"`
	ManifestWork *workv1.ManifestWork `json:"manifestWork,omitempty"`
}

// Data is the view as printable data.
func (v *ReplicaSetView) Data() replicaSetData {
	rs := v.ReplicaSet.DeepCopy()
	rs.APIVersion, rs.Kind = workv1alpha1.GroupVersion.String(), "ManifestWorkReplicaSet"
	rs.ManagedFields = nil
	d := replicaSetData{ReplicaSet: rs, Rollout: v.Rollout(), Clusters: []clusterData{}}
	if v.RenderErr != nil {
		d.Invalid = v.RenderErr.Error()
	}
	for _, cr := range v.Clusters {
		replicas, images, message := cr.held()
		cd := clusterData{Cluster: cr.Cluster, Placement: cr.placement, State: cr.Phase, Replicas: replicas, Images: images, Message: message}
		if cr.work != nil {
			cd.ManifestWork = cr.work.DeepCopy()
			cd.ManifestWork.APIVersion, cd.ManifestWork.Kind = workv1.GroupVersion.String(), "ManifestWork"
			cd.ManifestWork.ManagedFields = nil
		}
		d.Clusters = append(d.Clusters, cd)
	}
	return d
}
