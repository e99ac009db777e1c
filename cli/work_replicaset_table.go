package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
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
	var clusters []string
	cmd := &cobra.Command{
		Use:     "work NAME [-n NAMESPACE | --clusters NAME[,NAME...]]",
		Aliases: []string{"works", "manifestwork", "manifestworkreplicaset", "mw", "mwrs"},
		Short:   "Show a ManifestWorkReplicaSet and where each of its clusters stands in the rollout, or a ManifestWork of a cluster",
		Long: `With -n, show ManifestWorkReplicaSet NAME of NAMESPACE: its Placements and
rollout strategies, its overrides and replica division, the hub's
conditions, and one row per chosen cluster with its state in the rollout:
  Pending    no ManifestWork yet, or one with the previous spec: its turn has not come
  Applying   it has the current spec; its agent has not reported it applied and available
  Available  its agent reports the current spec applied and available
  Failed     it reports the work Degraded, or was not available within progressDeadline
REPLICAS and IMAGES are what the cluster's ManifestWork holds (for a
Pending cluster, the previous spec; its MESSAGE says what it gets next).

With --clusters, show ManifestWork NAME of each cluster named: what owns
it, its conditions, and each resource it applied with its own conditions
and status feedback.

With neither, NAME is looked up: a ManifestWorkReplicaSet of that name
in any namespace, or ManifestWorks of that name that no replica set owns.

-o json and -o yaml print the same as data: for a replica set, the
ManifestWorkReplicaSet, the rollout, and each cluster's state, replicas,
images, message and ManifestWork; for a ManifestWork, the object.`,
		Example: `  flotilla describe work hello -n apps
  flotilla describe work hello --clusters cluster1
  flotilla describe work hello -n apps -o json | jq -r '.clusters[] | select(.state == "Failed") | .cluster'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("name one ManifestWorkReplicaSet or ManifestWork (got %d): flotilla describe work NAME [-n NAMESPACE | --clusters NAME]", len(args))
			}
			clusters = cleanClusterList(clusters)
			if namespace != "" && len(clusters) > 0 {
				return errors.New("-n and --clusters exclude each other: -n describes a ManifestWorkReplicaSet, --clusters the ManifestWork of each cluster named")
			}
			for _, n := range clusters {
				if err := validateClusterName(n); err != nil {
					return fmt.Errorf("--clusters: %w", err)
				}
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
			d := workDescriber{c: c, out: g.streams.Out, output: output}
			ctx, name := cmd.Context(), args[0]
			switch {
			case namespace != "":
				return d.replicaSet(ctx, client.ObjectKey{Namespace: namespace, Name: name})
			case len(clusters) > 0:
				return d.works(ctx, name, clusters)
			}
			return d.lookUp(ctx, name)
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "the namespace of the ManifestWorkReplicaSet")
	addClustersFlag(g, cmd, &clusters, "the clusters whose ManifestWork NAME to show, comma separated")
	cmd.ValidArgsFunction = completeWorkNames(g, &clusters, &namespace)
	addOutputFlag(cmd, &output, outputJSON, outputYAML)
	describe.AddCommand(cmd)
	return describe
}

// workDescriber prints what `describe work` shows.
type workDescriber struct {
	c      *clients
	out    io.Writer
	output string
}

func (d workDescriber) replicaSet(ctx context.Context, key client.ObjectKey) error {
	rs := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := d.c.ctrl.Get(ctx, key, rs); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("ManifestWorkReplicaSet %s not found in namespace %s (see `flotilla get works --replicasets -n %s`; the ManifestWork of a cluster is shown by `flotilla describe work %s --clusters CLUSTER`)", key.Name, key.Namespace, key.Namespace, key.Name)
		}
		return explainClusterAPI(err, d.c, "get ManifestWorkReplicaSet "+key.String())
	}
	v, err := loadReplicaSetView(ctx, d.c, rs, time.Now())
	if err != nil {
		return err
	}
	if d.output != outputText {
		return printData(d.out, d.output, v.data())
	}
	return writeReplicaSetDescription(d.out, v)
}

func (d workDescriber) works(ctx context.Context, name string, clusters []string) error {
	var found []*workv1.ManifestWork
	for _, cluster := range clusters {
		mw := &workv1.ManifestWork{}
		if err := d.c.ctrl.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, mw); err != nil {
			if !apierrors.IsNotFound(err) {
				return explainClusterAPI(err, d.c, fmt.Sprintf("get ManifestWork %s/%s", cluster, name))
			}
			if err := d.c.ctrl.Get(ctx, client.ObjectKey{Name: cluster}, &clusterv1.ManagedCluster{}); apierrors.IsNotFound(err) {
				return fmt.Errorf("cluster %s does not exist on the hub (see `flotilla get clusters` for the names)", cluster)
			}
			return fmt.Errorf("ManifestWork %s not found in cluster %s (see `flotilla get works --clusters %s`)", name, cluster, cluster)
		}
		found = append(found, mw)
	}
	return d.printWorks(found)
}

func (d workDescriber) printWorks(found []*workv1.ManifestWork) error {
	now := time.Now()
	for i, mw := range found {
		if d.output != outputText {
			mw.APIVersion, mw.Kind, mw.ManagedFields = workv1.GroupVersion.String(), "ManifestWork", nil
			if len(found) == 1 {
				return printData(d.out, d.output, mw)
			}
			continue
		}
		if i > 0 {
			fmt.Fprintln(d.out)
		}
		if err := writeManifestWorkDescription(d.out, mw, now); err != nil {
			return err
		}
	}
	if d.output != outputText {
		list := &workv1.ManifestWorkList{}
		list.APIVersion, list.Kind = workv1.GroupVersion.String(), "ManifestWorkList"
		for _, mw := range found {
			list.Items = append(list.Items, *mw)
		}
		return printData(d.out, d.output, list)
	}
	return nil
}

// lookUp describes what NAME is when neither -n nor --clusters says: the
// one replica set of that name, else the ManifestWorks of that name that
// no replica set owns; it asks which when several match.
func (d workDescriber) lookUp(ctx context.Context, name string) error {
	sets, err := listReplicaSets(ctx, d.c, "", name)
	if err != nil {
		return err
	}
	works := &workv1.ManifestWorkList{}
	if err := d.c.ctrl.List(ctx, works, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", name)}); err != nil {
		return explainClusterAPI(err, d.c, "list ManifestWorks named "+name)
	}
	var single []*workv1.ManifestWork
	for i := range works.Items {
		if works.Items[i].Labels[workv1.ManifestWorkReplicaSetLabel] == "" {
			single = append(single, &works.Items[i])
		}
	}
	switch {
	case len(sets) == 1 && len(single) == 0:
		return d.replicaSet(ctx, client.ObjectKeyFromObject(&sets[0]))
	case len(sets) == 0 && len(single) > 0:
		return d.printWorks(single)
	case len(sets) == 0:
		return fmt.Errorf("no ManifestWorkReplicaSet or ManifestWork is named %s (see `flotilla get works`)", name)
	}
	var which []string
	for _, rs := range sets {
		which = append(which, fmt.Sprintf("flotilla describe work %s -n %s", name, rs.Namespace))
	}
	for _, mw := range single {
		which = append(which, fmt.Sprintf("flotilla describe work %s --clusters %s", name, mw.Namespace))
	}
	return fmt.Errorf("several objects are named %s; say which:\n  %s", name, strings.Join(which, "\n  "))
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
			replicas, images, message := cr.held()
			var conds []metav1.Condition
			if cr.work != nil {
				conds = cr.work.Status.Conditions
			}
			rows = append(rows, []string{"  " + cr.cluster, cr.placement, string(cr.phase), replicas, images,
				workConditionColumn(conds, "Applied"), workConditionColumn(conds, "Available"), orDash(message)})
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
		replicas, images, message := cr.held()
		cd := clusterData{Cluster: cr.cluster, Placement: cr.placement, State: cr.phase, Replicas: replicas, Images: images, Message: message}
		if cr.work != nil {
			cd.ManifestWork = cr.work.DeepCopy()
			cd.ManifestWork.APIVersion, cd.ManifestWork.Kind = workv1.GroupVersion.String(), "ManifestWork"
			cd.ManifestWork.ManagedFields = nil
		}
		d.Clusters = append(d.Clusters, cd)
	}
	return d
}
