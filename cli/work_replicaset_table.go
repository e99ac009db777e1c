package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// listReplicaSets lists the replica sets of namespace (every one when
// empty), only those named name when given, sorted.
func listReplicaSets(ctx context.Context, c *clients, namespace, name string) ([]workv1alpha1.ManifestWorkReplicaSet, error) {
	list := &workv1alpha1.ManifestWorkReplicaSetList{}
	var opts []client.ListOption
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := c.ctrl.List(ctx, list, opts...); err != nil {
		return nil, explainClusterAPI(err, c, "list ManifestWorkReplicaSets")
	}
	items := slices.DeleteFunc(list.Items, func(rs workv1alpha1.ManifestWorkReplicaSet) bool { return name != "" && rs.Name != name })
	slices.SortFunc(items, func(a, b workv1alpha1.ManifestWorkReplicaSet) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return items, nil
}

// replicaSetTable renders replica sets with their rollout progress:
// CLUSTERS is how many clusters their Placements chose, UPDATED, APPLIED,
// AVAILABLE and DEGRADED count their ManifestWorks as the hub summed them
// up, ROLLOUT is where the rollout stands. wide adds the strategies and
// the hub's messages.
func replicaSetTable(views []*replicaSetView, now time.Time, wide bool) (header []string, rows [][]string) {
	header = []string{"NAMESPACE", "NAME", "PLACEMENTS", "CLUSTERS", "UPDATED", "APPLIED", "AVAILABLE", "DEGRADED", "ROLLOUT", "AGE"}
	if wide {
		header = append(header, "STRATEGY", "MESSAGE")
	}
	for _, v := range views {
		rs, sum := v.rs, v.rs.Status.Summary
		var placements, strategies []string
		for _, ref := range rs.Spec.PlacementRefs {
			placements = append(placements, ref.Name)
			strategies = append(strategies, ref.Name+": "+strategyText(ref.RolloutStrategy))
		}
		row := []string{rs.Namespace, rs.Name, strings.Join(placements, ","), strconv.Itoa(len(v.clusters)),
			strconv.Itoa(sum.Updated), strconv.Itoa(sum.Applied), strconv.Itoa(sum.Available), strconv.Itoa(sum.Degraded),
			v.rollout(), ageColumn(rs.CreationTimestamp, now)}
		if wide {
			msg := conditionMessages(rs.Status.Conditions)
			if v.renderErr != nil {
				msg = v.renderErr.Error()
			}
			row = append(row, strings.Join(strategies, "; "), msg)
		}
		rows = append(rows, row)
	}
	return header, rows
}

// replicaSetViews loads the view of each replica set.
func replicaSetViews(ctx context.Context, c *clients, items []workv1alpha1.ManifestWorkReplicaSet, now time.Time) ([]*replicaSetView, error) {
	views := make([]*replicaSetView, 0, len(items))
	for i := range items {
		v, err := loadReplicaSetView(ctx, c, &items[i], now)
		if err != nil {
			return nil, err
		}
		views = append(views, v)
	}
	return views, nil
}

// withWorkDescribe adds `describe work` to the describe command.
func withWorkDescribe(g *globalOptions, describe *cobra.Command) *cobra.Command {
	var namespace, output string
	cmd := &cobra.Command{
		Use:     "work NAME -n NAMESPACE",
		Aliases: []string{"works", "manifestworkreplicaset", "mwrs"},
		Short:   "Show a ManifestWorkReplicaSet: its Placements, overrides, division, and where each chosen cluster stands in the rollout",
		Long: `Show ManifestWorkReplicaSet NAME of NAMESPACE: its Placements and rollout
strategies, its overrides and replica division, the hub's conditions, and
one row per chosen cluster with its state in the rollout:
  Pending    no ManifestWork yet, or one with the previous spec: its turn has not come
  Applying   it has the current spec; its agent has not reported it applied and available
  Available  its agent reports the current spec applied and available
  Failed     it reports the work Degraded, or was not available within progressDeadline
REPLICAS and IMAGES are what the cluster is to run, overrides and division applied.

-o json and -o yaml print the same as data: the ManifestWorkReplicaSet,
the rollout, and each cluster's state, replicas, images, message and
ManifestWork.`,
		Example: `  flotilla describe work hello -n apps
  flotilla describe work hello -n apps -o json | jq -r '.clusters[] | select(.state == "Failed") | .cluster'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("name one ManifestWorkReplicaSet (got %d): flotilla describe work NAME -n NAMESPACE", len(args))
			}
			if namespace == "" {
				return fmt.Errorf("say which namespace ManifestWorkReplicaSet %s is in: flotilla describe work %s -n NAMESPACE", args[0], args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, outputJSON, outputYAML); err != nil {
				return err
			}
			c, err := g.clientsFor(hubSide)
			if err != nil {
				return err
			}
			ctx, key := cmd.Context(), client.ObjectKey{Namespace: namespace, Name: args[0]}
			rs := &workv1alpha1.ManifestWorkReplicaSet{}
			if err := c.ctrl.Get(ctx, key, rs); err != nil {
				if apierrors.IsNotFound(err) {
					return fmt.Errorf("ManifestWorkReplicaSet %s not found in namespace %s (see `flotilla get works --replicasets -n %s`; ManifestWorks of single clusters are shown by `flotilla get works %s`)", key.Name, key.Namespace, key.Namespace, key.Name)
				}
				return explainClusterAPI(err, c, "get ManifestWorkReplicaSet "+key.String())
			}
			v, err := loadReplicaSetView(ctx, c, rs, time.Now())
			if err != nil {
				return err
			}
			if output != outputText {
				return printData(g.streams.Out, output, v.data())
			}
			return writeReplicaSetDescription(g.streams.Out, v)
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "the namespace of the ManifestWorkReplicaSet")
	addOutputFlag(cmd, &output, outputJSON, outputYAML)
	describe.AddCommand(cmd)
	return describe
}

// writeReplicaSetDescription writes what `describe work` shows.
func writeReplicaSetDescription(w io.Writer, v *replicaSetView) error {
	rs := v.rs
	fmt.Fprintf(w, "Name:         %s\nNamespace:    %s\nRollout:      %s\n", rs.Name, rs.Namespace, v.rollout())
	fmt.Fprintln(w, "Placements:")
	for _, ref := range rs.Spec.PlacementRefs {
		fmt.Fprintf(w, "  %s (%s)\n", ref.Name, strategyText(ref.RolloutStrategy))
	}
	if len(rs.Spec.Overrides) > 0 {
		fmt.Fprintln(w, "Overrides:")
		for i, o := range rs.Spec.Overrides {
			fmt.Fprintf(w, "  %s\n", overrideText(i, o))
		}
	}
	if d := rs.Spec.ReplicaDivision; d != nil {
		fmt.Fprintf(w, "Division:     %s\n", divisionText(d))
	}
	if v.renderErr != nil {
		fmt.Fprintf(w, "Invalid:      %v\n", v.renderErr)
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
			rows = append(rows, []string{"  " + c.Type, string(c.Status), c.Reason, orDash(c.Message)})
		}
		if err := printTable(w, []string{"  TYPE", "STATUS", "REASON", "MESSAGE"}, rows); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "Clusters:")
	if len(v.clusters) == 0 {
		fmt.Fprintln(w, "  (none chosen: see flotilla get placements -n "+rs.Namespace+")")
	} else {
		rows := make([][]string, 0, len(v.clusters))
		for _, cr := range v.clusters {
			replicas, images := replicasAndImages(cr.want)
			var conds []metav1.Condition
			if cr.work != nil {
				conds = cr.work.Status.Conditions
			}
			rows = append(rows, []string{"  " + cr.cluster, cr.placement, string(cr.phase), replicas, images,
				workConditionColumn(conds, "Applied"), workConditionColumn(conds, "Available"), orDash(cr.why)})
		}
		if err := printTable(w, []string{"  CLUSTER", "PLACEMENT", "STATE", "REPLICAS", "IMAGES", "APPLIED", "AVAILABLE", "MESSAGE"}, rows); err != nil {
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
		what = append(what, plural(n, "label/annotation"))
	}
	if n := len(o.JSONPatch); n > 0 {
		what = append(what, plural(n, "JSON patch operation"))
	}
	return fmt.Sprintf("%s: clusters %s: %s", name, orNone(strings.Join(who, " or ")), orNone(strings.Join(what, "; ")))
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
	State        clusterPhase         `json:"state"`
	Replicas     string               `json:"replicas"`
	Images       string               `json:"images"`
	Message      string               `json:"message,omitempty"`
	ManifestWork *workv1.ManifestWork `json:"manifestWork,omitempty"`
}

// data is the view as printable data.
func (v *replicaSetView) data() replicaSetData {
	rs := v.rs.DeepCopy()
	rs.APIVersion, rs.Kind = workv1alpha1.GroupVersion.String(), "ManifestWorkReplicaSet"
	rs.ManagedFields = nil
	d := replicaSetData{ReplicaSet: rs, Rollout: v.rollout(), Clusters: []clusterData{}}
	if v.renderErr != nil {
		d.Invalid = v.renderErr.Error()
	}
	for _, cr := range v.clusters {
		replicas, images := replicasAndImages(cr.want)
		cd := clusterData{Cluster: cr.cluster, Placement: cr.placement, State: cr.phase, Replicas: replicas, Images: images, Message: cr.why}
		if cr.work != nil {
			cd.ManifestWork = cr.work.DeepCopy()
			cd.ManifestWork.APIVersion, cd.ManifestWork.Kind = workv1.GroupVersion.String(), "ManifestWork"
			cd.ManifestWork.ManagedFields = nil
		}
		d.Clusters = append(d.Clusters, cd)
	}
	return d
}
