package describe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/workview"
	"github.com/flotilla-io/flotilla/hub/clusterset"
)

// WithDescribes adds `describe cluster`, `describe clusterset` and
// `describe placement` to the describe command, so that every kind `get`
// lists can be described (work and policy are added beside).
func WithDescribes(g *cmdutil.Globals, describe *cobra.Command) *cobra.Command {
	if describe.Example == "" {
		describe.Example = `  flotilla describe cluster cluster1
  flotilla describe work hello -n apps
  flotilla describe work hello --clusters cluster1
  flotilla describe placement web -n apps
  flotilla describe clusterset default
  flotilla describe policy policy-namespace -n policies`
	}
	if describe.Long == "" {
		describe.Long = "Show one object of the hub in detail: its spec, its status and conditions, and what it relates to."
	}
	describe.Use = "describe KIND NAME"
	describe.AddCommand(newDescribeClusterCommand(g), newDescribeClusterSetCommand(g), newDescribePlacementCommand(g))
	return describe
}

func newDescribeClusterCommand(g *cmdutil.Globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "cluster NAME",
		Aliases: []string{"clusters", "managedcluster", "mcl"},
		Short:   "Show a managed cluster: whether it is accepted and joined, its conditions, labels, capacity and ManifestWorks",
		Long: `Show ManagedCluster NAME: whether the hub accepts it and its agent joined,
its conditions with their messages, its labels and cluster set, its
Kubernetes version, capacity and API URL, and its ManifestWorks with
whether they are applied and available.

-o json and -o yaml print the ManagedCluster object.`,
		Example: `  flotilla describe cluster cluster1
  flotilla describe cluster cluster1 -o yaml`,
		Args:              exactlyOneName("ManagedCluster", "flotilla describe cluster NAME"),
		ValidArgsFunction: cmdutil.CompleteClusterNames(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			c, err := g.ClientsFor(cmdutil.HubSide)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			mc := &clusterv1.ManagedCluster{}
			printed, err := getToDescribe(ctx, c, g.Streams.Out, output, mc, clusterv1.GroupVersion.WithKind("ManagedCluster"), args[0],
				fmt.Sprintf("cluster %s does not exist on the hub (see `flotilla get clusters` for the names)", args[0]))
			if printed || err != nil {
				return err
			}
			works := &workv1.ManifestWorkList{}
			if err := c.Ctrl.List(ctx, works, client.InNamespace(mc.Name)); err != nil {
				return cmdutil.ExplainClusterAPI(err, c, "list the ManifestWorks of cluster "+mc.Name)
			}
			return writeClusterDescription(g.Streams.Out, mc, works.Items, time.Now())
		},
	}
	cmdutil.AddOutputFlag(cmd, &output, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

// writeClusterDescription writes what `describe cluster` shows.
func writeClusterDescription(w io.Writer, mc *clusterv1.ManagedCluster, works []workv1.ManifestWork, now time.Time) error {
	fmt.Fprintf(w, "Name:         %s\nAccepted:     %s\nJoined:       %s\nAvailable:    %s\nKubernetes:   %s\nAge:          %s\n",
		mc.Name, cmdutil.BoolColumn(mc.Spec.HubAcceptsClient),
		cmdutil.ConditionColumn(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined),
		cmdutil.ConditionColumn(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable),
		cmdutil.OrNone(mc.Status.Version.Kubernetes), cmdutil.AgeColumn(mc.CreationTimestamp, now))
	fmt.Fprintf(w, "Cluster set:  %s\nLabels:       %s\nCapacity:     cpu %s, memory %s\nURL:          %s\n",
		cmdutil.OrNone(mc.Labels[clusterv1.ClusterSetLabel]), cmdutil.LabelsColumn(mc.Labels),
		cmdutil.QuantityColumn(mc.Status.Capacity, clusterv1.ResourceCPU), cmdutil.QuantityColumn(mc.Status.Capacity, clusterv1.ResourceMemory),
		cmdutil.URLColumn(mc.Spec.ManagedClusterClientConfigs))
	if !mc.Spec.HubAcceptsClient {
		fmt.Fprintf(w, "              (not accepted: accept it with `flotilla accept --clusters %s`)\n", mc.Name)
	}
	if err := writeConditions(w, mc.Status.Conditions, "(none yet: its agent has not reported)"); err != nil {
		return err
	}
	fmt.Fprintln(w, "ManifestWorks:")
	if len(works) == 0 {
		fmt.Fprintf(w, "  (none: create one with `flotilla create work NAME -f FILE --clusters %s`)\n", mc.Name)
		return nil
	}
	slices.SortFunc(works, func(a, b workv1.ManifestWork) int { return strings.Compare(a.Name, b.Name) })
	rows := make([][]string, 0, len(works))
	for _, mw := range works {
		rows = append(rows, []string{"  " + mw.Name, workview.WorkConditionColumn(mw.Status.Conditions, workv1.WorkApplied),
			workview.WorkConditionColumn(mw.Status.Conditions, workv1.WorkAvailable), workview.WorkConditionColumn(mw.Status.Conditions, workv1.WorkDegraded),
			cmdutil.AgeColumn(mw.CreationTimestamp, now)})
	}
	return cmdutil.PrintTable(w, []string{"  NAME", "APPLIED", "AVAILABLE", "DEGRADED", "AGE"}, rows)
}

func newDescribeClusterSetCommand(g *cmdutil.Globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "clusterset NAME",
		Aliases: []string{"clustersets", "managedclusterset", "mclset"},
		Short:   "Show a cluster set: how it selects its members, the members, and the namespaces it is bound to",
		Long: `Show ManagedClusterSet NAME: how it selects its members (the clusterset
label, or a label selector), which clusters are members, which namespaces
it is bound to (their Placements may choose from it), and its conditions.

-o json and -o yaml print the ManagedClusterSet object.`,
		Example: `  flotilla describe clusterset default
  flotilla describe clusterset prod -o yaml`,
		Args:              exactlyOneName("ManagedClusterSet", "flotilla describe clusterset NAME"),
		ValidArgsFunction: cmdutil.CompleteObjectNames(g, func() client.ObjectList { return &clusterv1beta2.ManagedClusterSetList{} }, nil),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			c, err := g.ClientsFor(cmdutil.HubSide)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			set := &clusterv1beta2.ManagedClusterSet{}
			printed, err := getToDescribe(ctx, c, g.Streams.Out, output, set, clusterv1beta2.GroupVersion.WithKind("ManagedClusterSet"), args[0],
				fmt.Sprintf("ManagedClusterSet %s not found (see `flotilla get clustersets` for the names)", args[0]))
			if printed || err != nil {
				return err
			}
			bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
			if err := c.Ctrl.List(ctx, bindings); err != nil {
				return cmdutil.ExplainClusterAPI(err, c, "list ManagedClusterSetBindings")
			}
			clusters := &clusterv1.ManagedClusterList{}
			if err := c.Ctrl.List(ctx, clusters); err != nil {
				return cmdutil.ExplainClusterAPI(err, c, "list ManagedClusters")
			}
			return writeClusterSetDescription(g.Streams.Out, set, bindings.Items, clusters.Items, time.Now())
		},
	}
	cmdutil.AddOutputFlag(cmd, &output, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

// writeClusterSetDescription writes what `describe clusterset` shows.
func writeClusterSetDescription(w io.Writer, set *clusterv1beta2.ManagedClusterSet, bindings []clusterv1beta2.ManagedClusterSetBinding, clusters []clusterv1.ManagedCluster, now time.Time) error {
	sel, selErr := clusterset.Selector(set)
	var members, namespaces []string
	if selErr == nil {
		for _, mc := range clusters {
			if sel.Matches(labels.Set(mc.Labels)) {
				members = append(members, mc.Name)
			}
		}
	}
	for _, b := range bindings {
		if b.Spec.ClusterSet == set.Name {
			namespaces = append(namespaces, b.Namespace)
		}
	}
	slices.Sort(members)
	slices.Sort(namespaces)
	fmt.Fprintf(w, "Name:         %s\nSelector:     %s\nAge:          %s\n", set.Name, cmdutil.SelectorColumn(set, selErr), cmdutil.AgeColumn(set.CreationTimestamp, now))
	if selErr != nil {
		fmt.Fprintf(w, "Invalid:      %v\n", selErr)
	}
	fmt.Fprintf(w, "Members:      %s\n", cmdutil.OrNone(strings.Join(members, ", ")))
	fmt.Fprintf(w, "Bound to:     %s\n", cmdutil.OrNone(strings.Join(namespaces, ", ")))
	if len(namespaces) == 0 {
		fmt.Fprintf(w, "              (no Placement may choose from it until it is bound: flotilla clusterset bind %s -n NAMESPACE)\n", set.Name)
	}
	return writeConditions(w, set.Status.Conditions, "(none yet)")
}

func newDescribePlacementCommand(g *cmdutil.Globals) *cobra.Command {
	var namespace, output string
	cmd := &cobra.Command{
		Use:     "placement NAME -n NAMESPACE",
		Aliases: []string{"placements"},
		Short:   "Show a Placement: what it asks for, the clusters it chose, its decision groups and conditions",
		Long: `Show Placement NAME of NAMESPACE: the cluster sets it chooses from, how
many clusters it asks for and by which predicates, the clusters it chose
(each with whether it is available), its decision groups, and its
conditions, whose messages say why fewer clusters were chosen than asked
for, or what to fix in a misconfigured placement.

-o json and -o yaml print the Placement object.`,
		Example: `  flotilla describe placement web -n apps
  flotilla describe placement web -n apps -o yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := exactlyOneName("Placement", "flotilla describe placement NAME -n NAMESPACE")(cmd, args); err != nil {
				return err
			}
			if namespace == "" {
				return fmt.Errorf("say which namespace Placement %s is in: flotilla describe placement %s -n NAMESPACE", args[0], args[0])
			}
			return nil
		},
		ValidArgsFunction: cmdutil.CompleteObjectNames(g, func() client.ObjectList { return &clusterv1beta1.PlacementList{} }, &namespace),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			c, err := g.ClientsFor(cmdutil.HubSide)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			p := &clusterv1beta1.Placement{}
			if err := c.Ctrl.Get(ctx, client.ObjectKey{Namespace: namespace, Name: args[0]}, p); err != nil {
				if apierrors.IsNotFound(err) {
					return fmt.Errorf("Placement %s not found in namespace %s (see `flotilla get placements -n %s`)", args[0], namespace, namespace)
				}
				return cmdutil.ExplainClusterAPI(err, c, "get Placement "+namespace+"/"+args[0])
			}
			if output != cmdutil.OutputText {
				p.APIVersion, p.Kind, p.ManagedFields = clusterv1beta1.GroupVersion.String(), "Placement", nil
				return cmdutil.PrintData(g.Streams.Out, output, p)
			}
			chosen, err := cmdutil.PlacementClusters(ctx, c, p)
			if err != nil {
				return err
			}
			clusters := &clusterv1.ManagedClusterList{}
			if err := c.Ctrl.List(ctx, clusters); err != nil {
				return cmdutil.ExplainClusterAPI(err, c, "list ManagedClusters")
			}
			return writePlacementDescription(g.Streams.Out, p, chosen, clusters.Items, time.Now())
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "the namespace of the Placement")
	cmdutil.AddOutputFlag(cmd, &output, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

// writePlacementDescription writes what `describe placement` shows.
func writePlacementDescription(w io.Writer, p *clusterv1beta1.Placement, chosen []string, clusters []clusterv1.ManagedCluster, now time.Time) error {
	asked := "every matching cluster"
	if p.Spec.NumberOfClusters != nil {
		asked = cmdutil.Plural(int(*p.Spec.NumberOfClusters), "cluster")
	}
	sets := "every set bound to " + p.Namespace
	if len(p.Spec.ClusterSets) > 0 {
		sets = strings.Join(p.Spec.ClusterSets, ", ")
	}
	fmt.Fprintf(w, "Name:         %s\nNamespace:    %s\nCluster sets: %s\nAsks for:     %s\nAge:          %s\n",
		p.Name, p.Namespace, sets, asked, cmdutil.AgeColumn(p.CreationTimestamp, now))
	for i, pred := range p.Spec.Predicates {
		sel := pred.RequiredClusterSelector
		var parts []string
		if s := metav1.FormatLabelSelector(&sel.LabelSelector); s != "<none>" {
			parts = append(parts, "labels "+s)
		}
		if len(sel.ClaimSelector.MatchExpressions) > 0 {
			parts = append(parts, cmdutil.Plural(len(sel.ClaimSelector.MatchExpressions), "claim expression"))
		}
		if n := len(sel.CelSelector.CelExpressions); n > 0 {
			parts = append(parts, cmdutil.Plural(n, "CEL expression"))
		}
		fmt.Fprintf(w, "Predicate %d:  %s\n", i+1, cmdutil.OrNone(strings.Join(parts, "; ")))
	}
	fmt.Fprintf(w, "Groups:       %s\nMessage:      %s\n", cmdutil.GroupsColumn(p.Status.DecisionGroups), cmdutil.PlacementMessage(p))
	if err := writeConditions(w, p.Status.Conditions, "(none yet: is the hub's placement controller running?)"); err != nil {
		return err
	}
	fmt.Fprintln(w, "Chosen clusters:")
	if len(chosen) == 0 {
		fmt.Fprintln(w, "  (none)")
		return nil
	}
	rows := make([][]string, 0, len(chosen))
	for _, name := range chosen {
		available := "<unknown cluster>"
		if i := slices.IndexFunc(clusters, func(mc clusterv1.ManagedCluster) bool { return mc.Name == name }); i >= 0 {
			available = cmdutil.ConditionColumn(clusters[i].Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		}
		rows = append(rows, []string{"  " + name, available})
	}
	return cmdutil.PrintTable(w, []string{"  CLUSTER", "AVAILABLE"}, rows)
}

// writeManifestWorkDescription writes what `describe work --clusters`
// shows of one ManifestWork.
func writeManifestWorkDescription(w io.Writer, mw *workv1.ManifestWork, now time.Time) error {
	fmt.Fprintf(w, "Name:         %s\nCluster:      %s\nAge:          %s\n", mw.Name, mw.Namespace, cmdutil.AgeColumn(mw.CreationTimestamp, now))
	if owner := mw.Labels[workv1.ManifestWorkReplicaSetLabel]; owner != "" {
		ns, name, _ := strings.Cut(owner, ".")
		fmt.Fprintf(w, "Owned by:     ManifestWorkReplicaSet %s/%s (flotilla describe work %s -n %s)\n", ns, name, name, ns)
	}
	if mw.DeletionTimestamp != nil {
		fmt.Fprintln(w, "Deleting:     its agent is removing what it applied")
	}
	replicas, images := workview.ReplicasAndImages(&mw.Spec)
	fmt.Fprintf(w, "Manifests:    %d (replicas %s, images %s)\n", len(mw.Spec.Workload.Manifests), replicas, images)
	if err := writeConditions(w, mw.Status.Conditions, "(none yet: its agent has not reported)"); err != nil {
		return err
	}
	fmt.Fprintln(w, "Resources:")
	ms := workview.ManifestRows(*mw)
	if len(ms) == 0 {
		fmt.Fprintln(w, "  (none reported yet)")
		return nil
	}
	rows := make([][]string, 0, len(ms))
	for _, m := range ms {
		rows = append(rows, []string{"  " + workview.ResourceColumn(m.ResourceMeta, true),
			workview.WorkConditionColumn(m.Conditions, workv1.WorkApplied), workview.WorkConditionColumn(m.Conditions, workv1.WorkAvailable),
			cmdutil.OrDash(workview.ManifestDetails(m, now, true))})
	}
	return cmdutil.PrintTable(w, []string{"  RESOURCE", "APPLIED", "AVAILABLE", "DETAILS"}, rows)
}

// writeConditions writes a Conditions: section, or none when there are none.
func writeConditions(w io.Writer, conds []metav1.Condition, none string) error {
	fmt.Fprintln(w, "Conditions:")
	if len(conds) == 0 {
		fmt.Fprintln(w, "  "+none)
		return nil
	}
	rows := make([][]string, 0, len(conds))
	for _, c := range conds {
		rows = append(rows, []string{"  " + c.Type, string(c.Status), cmdutil.OrDash(c.Reason), cmdutil.OrDash(c.Message)})
	}
	return cmdutil.PrintTable(w, []string{"  TYPE", "STATUS", "REASON", "MESSAGE"}, rows)
}

// getToDescribe gets the cluster-scoped object name of kind gvk into obj
// for describe; notFound is the error when it does not exist. printed says
// that output asked for JSON or YAML and the object has been printed.
func getToDescribe(ctx context.Context, c *cmdutil.Clients, out io.Writer, output string, obj client.Object, gvk schema.GroupVersionKind, name, notFound string) (printed bool, err error) {
	if err := c.Ctrl.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, errors.New(notFound)
		}
		return false, cmdutil.ExplainClusterAPI(err, c, "get "+gvk.Kind+" "+name)
	}
	if output == cmdutil.OutputText {
		return false, nil
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	obj.SetManagedFields(nil)
	return true, cmdutil.PrintData(out, output, obj)
}

// exactlyOneName is an Args function for commands that show one object.
func exactlyOneName(kind, usage string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("name one %s (got %d): %s", kind, len(args), usage)
		}
		return nil
	}
}

// NewCommand is `flotilla describe`, with `describe policy`.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe",
		Short: "Show one object of the hub in detail",
		Args:  cobra.NoArgs,
	}
	o := &describePolicyOptions{Globals: g}
	policy := &cobra.Command{
		Use:     "policy NAME -n NAMESPACE",
		Short:   "Show a root Policy's placement and each cluster's compliance with its latest message",
		Example: `  flotilla describe policy policy-namespace -n policies`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("name one Policy (got %d): flotilla describe policy NAME -n NAMESPACE", len(args))
			}
			if o.namespace == "" {
				return fmt.Errorf("say which namespace Policy %s is in: flotilla describe policy %s -n NAMESPACE", args[0], args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd.Context(), args[0]) },
	}
	policy.Flags().StringVarP(&o.namespace, "namespace", "n", "", "the namespace of the Policy")
	cmd.AddCommand(policy)
	return cmd
}
