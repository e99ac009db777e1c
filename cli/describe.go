package cli

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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/clusterset"
)

// withDescribes adds `describe cluster`, `describe clusterset` and
// `describe placement` to the describe command, so that every kind `get`
// lists can be described (work and policy are added beside).
func withDescribes(g *globalOptions, describe *cobra.Command) *cobra.Command {
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

func newDescribeClusterCommand(g *globalOptions) *cobra.Command {
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
		ValidArgsFunction: completeClusterNames(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, outputJSON, outputYAML); err != nil {
				return err
			}
			c, err := g.clientsFor(hubSide)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			mc := &clusterv1.ManagedCluster{}
			printed, err := getToDescribe(ctx, c, g.streams.Out, output, mc, clusterv1.GroupVersion.WithKind("ManagedCluster"), args[0],
				fmt.Sprintf("cluster %s does not exist on the hub (see `flotilla get clusters` for the names)", args[0]))
			if printed || err != nil {
				return err
			}
			works := &workv1.ManifestWorkList{}
			if err := c.ctrl.List(ctx, works, client.InNamespace(mc.Name)); err != nil {
				return explainClusterAPI(err, c, "list the ManifestWorks of cluster "+mc.Name)
			}
			return writeClusterDescription(g.streams.Out, mc, works.Items, time.Now())
		},
	}
	addOutputFlag(cmd, &output, outputJSON, outputYAML)
	return cmd
}

// writeClusterDescription writes what `describe cluster` shows.
func writeClusterDescription(w io.Writer, mc *clusterv1.ManagedCluster, works []workv1.ManifestWork, now time.Time) error {
	fmt.Fprintf(w, "Name:         %s\nAccepted:     %s\nJoined:       %s\nAvailable:    %s\nKubernetes:   %s\nAge:          %s\n",
		mc.Name, boolColumn(mc.Spec.HubAcceptsClient),
		conditionColumn(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined),
		conditionColumn(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable),
		orNone(mc.Status.Version.Kubernetes), ageColumn(mc.CreationTimestamp, now))
	fmt.Fprintf(w, "Cluster set:  %s\nLabels:       %s\nCapacity:     cpu %s, memory %s\nURL:          %s\n",
		orNone(mc.Labels[clusterv1.ClusterSetLabel]), labelsColumn(mc.Labels),
		quantityColumn(mc.Status.Capacity, clusterv1.ResourceCPU), quantityColumn(mc.Status.Capacity, clusterv1.ResourceMemory),
		urlColumn(mc.Spec.ManagedClusterClientConfigs))
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
		rows = append(rows, []string{"  " + mw.Name, workConditionColumn(mw.Status.Conditions, workv1.WorkApplied),
			workConditionColumn(mw.Status.Conditions, workv1.WorkAvailable), workConditionColumn(mw.Status.Conditions, workv1.WorkDegraded),
			ageColumn(mw.CreationTimestamp, now)})
	}
	return printTable(w, []string{"  NAME", "APPLIED", "AVAILABLE", "DEGRADED", "AGE"}, rows)
}

func newDescribeClusterSetCommand(g *globalOptions) *cobra.Command {
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
		ValidArgsFunction: completeObjectNames(g, func() client.ObjectList { return &clusterv1beta2.ManagedClusterSetList{} }, nil),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, outputJSON, outputYAML); err != nil {
				return err
			}
			c, err := g.clientsFor(hubSide)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			set := &clusterv1beta2.ManagedClusterSet{}
			printed, err := getToDescribe(ctx, c, g.streams.Out, output, set, clusterv1beta2.GroupVersion.WithKind("ManagedClusterSet"), args[0],
				fmt.Sprintf("ManagedClusterSet %s not found (see `flotilla get clustersets` for the names)", args[0]))
			if printed || err != nil {
				return err
			}
			bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
			if err := c.ctrl.List(ctx, bindings); err != nil {
				return explainClusterAPI(err, c, "list ManagedClusterSetBindings")
			}
			clusters := &clusterv1.ManagedClusterList{}
			if err := c.ctrl.List(ctx, clusters); err != nil {
				return explainClusterAPI(err, c, "list ManagedClusters")
			}
			return writeClusterSetDescription(g.streams.Out, set, bindings.Items, clusters.Items, time.Now())
		},
	}
	addOutputFlag(cmd, &output, outputJSON, outputYAML)
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
	fmt.Fprintf(w, "Name:         %s\nSelector:     %s\nAge:          %s\n", set.Name, selectorColumn(set, selErr), ageColumn(set.CreationTimestamp, now))
	if selErr != nil {
		fmt.Fprintf(w, "Invalid:      %v\n", selErr)
	}
	fmt.Fprintf(w, "Members:      %s\n", orNone(strings.Join(members, ", ")))
	fmt.Fprintf(w, "Bound to:     %s\n", orNone(strings.Join(namespaces, ", ")))
	if len(namespaces) == 0 {
		fmt.Fprintf(w, "              (no Placement may choose from it until it is bound: flotilla clusterset bind %s -n NAMESPACE)\n", set.Name)
	}
	return writeConditions(w, set.Status.Conditions, "(none yet)")
}

func newDescribePlacementCommand(g *globalOptions) *cobra.Command {
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
		ValidArgsFunction: completeObjectNames(g, func() client.ObjectList { return &clusterv1beta1.PlacementList{} }, &namespace),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, outputJSON, outputYAML); err != nil {
				return err
			}
			c, err := g.clientsFor(hubSide)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			p := &clusterv1beta1.Placement{}
			if err := c.ctrl.Get(ctx, client.ObjectKey{Namespace: namespace, Name: args[0]}, p); err != nil {
				if apierrors.IsNotFound(err) {
					return fmt.Errorf("Placement %s not found in namespace %s (see `flotilla get placements -n %s`)", args[0], namespace, namespace)
				}
				return explainClusterAPI(err, c, "get Placement "+namespace+"/"+args[0])
			}
			if output != outputText {
				p.APIVersion, p.Kind, p.ManagedFields = clusterv1beta1.GroupVersion.String(), "Placement", nil
				return printData(g.streams.Out, output, p)
			}
			chosen, err := placementClusters(ctx, c, p)
			if err != nil {
				return err
			}
			clusters := &clusterv1.ManagedClusterList{}
			if err := c.ctrl.List(ctx, clusters); err != nil {
				return explainClusterAPI(err, c, "list ManagedClusters")
			}
			return writePlacementDescription(g.streams.Out, p, chosen, clusters.Items, time.Now())
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "the namespace of the Placement")
	addOutputFlag(cmd, &output, outputJSON, outputYAML)
	return cmd
}

// writePlacementDescription writes what `describe placement` shows.
func writePlacementDescription(w io.Writer, p *clusterv1beta1.Placement, chosen []string, clusters []clusterv1.ManagedCluster, now time.Time) error {
	asked := "every matching cluster"
	if p.Spec.NumberOfClusters != nil {
		asked = plural(int(*p.Spec.NumberOfClusters), "cluster")
	}
	sets := "every set bound to " + p.Namespace
	if len(p.Spec.ClusterSets) > 0 {
		sets = strings.Join(p.Spec.ClusterSets, ", ")
	}
	fmt.Fprintf(w, "Name:         %s\nNamespace:    %s\nCluster sets: %s\nAsks for:     %s\nAge:          %s\n",
		p.Name, p.Namespace, sets, asked, ageColumn(p.CreationTimestamp, now))
	for i, pred := range p.Spec.Predicates {
		sel := pred.RequiredClusterSelector
		var parts []string
		if s := metav1.FormatLabelSelector(&sel.LabelSelector); s != "<none>" {
			parts = append(parts, "labels "+s)
		}
		if len(sel.ClaimSelector.MatchExpressions) > 0 {
			parts = append(parts, plural(len(sel.ClaimSelector.MatchExpressions), "claim expression"))
		}
		if n := len(sel.CelSelector.CelExpressions); n > 0 {
			parts = append(parts, plural(n, "CEL expression"))
		}
		fmt.Fprintf(w, "Predicate %d:  %s\n", i+1, orNone(strings.Join(parts, "; ")))
	}
	fmt.Fprintf(w, "Groups:       %s\nMessage:      %s\n", groupsColumn(p.Status.DecisionGroups), placementMessage(p))
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
			available = conditionColumn(clusters[i].Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		}
		rows = append(rows, []string{"  " + name, available})
	}
	return printTable(w, []string{"  CLUSTER", "AVAILABLE"}, rows)
}

// writeManifestWorkDescription writes what `describe work --clusters`
// shows of one ManifestWork.
func writeManifestWorkDescription(w io.Writer, mw *workv1.ManifestWork, now time.Time) error {
	fmt.Fprintf(w, "Name:         %s\nCluster:      %s\nAge:          %s\n", mw.Name, mw.Namespace, ageColumn(mw.CreationTimestamp, now))
	if owner := mw.Labels[workv1.ManifestWorkReplicaSetLabel]; owner != "" {
		ns, name, _ := strings.Cut(owner, ".")
		fmt.Fprintf(w, "Owned by:     ManifestWorkReplicaSet %s/%s (flotilla describe work %s -n %s)\n", ns, name, name, ns)
	}
	if mw.DeletionTimestamp != nil {
		fmt.Fprintln(w, "Deleting:     its agent is removing what it applied")
	}
	replicas, images := replicasAndImages(&mw.Spec)
	fmt.Fprintf(w, "Manifests:    %d (replicas %s, images %s)\n", len(mw.Spec.Workload.Manifests), replicas, images)
	if err := writeConditions(w, mw.Status.Conditions, "(none yet: its agent has not reported)"); err != nil {
		return err
	}
	fmt.Fprintln(w, "Resources:")
	ms := manifestRows(*mw)
	if len(ms) == 0 {
		fmt.Fprintln(w, "  (none reported yet)")
		return nil
	}
	rows := make([][]string, 0, len(ms))
	for _, m := range ms {
		rows = append(rows, []string{"  " + resourceColumn(m.ResourceMeta, true),
			workConditionColumn(m.Conditions, workv1.WorkApplied), workConditionColumn(m.Conditions, workv1.WorkAvailable),
			orDash(manifestDetails(m, now, true))})
	}
	return printTable(w, []string{"  RESOURCE", "APPLIED", "AVAILABLE", "DETAILS"}, rows)
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
		rows = append(rows, []string{"  " + c.Type, string(c.Status), orDash(c.Reason), orDash(c.Message)})
	}
	return printTable(w, []string{"  TYPE", "STATUS", "REASON", "MESSAGE"}, rows)
}

// getToDescribe gets the cluster-scoped object name of kind gvk into obj
// for describe; notFound is the error when it does not exist. printed says
// that output asked for JSON or YAML and the object has been printed.
func getToDescribe(ctx context.Context, c *clients, out io.Writer, output string, obj client.Object, gvk schema.GroupVersionKind, name, notFound string) (printed bool, err error) {
	if err := c.ctrl.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, errors.New(notFound)
		}
		return false, explainClusterAPI(err, c, "get "+gvk.Kind+" "+name)
	}
	if output == outputText {
		return false, nil
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	obj.SetManagedFields(nil)
	return true, printData(out, output, obj)
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

// completeObjectNames completes the names of the hub's objects of one
// kind, in *namespace when namespace is given and set, else everywhere.
func completeObjectNames(g *globalOptions, newList func() client.ObjectList, namespace *string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var opts []client.ListOption
		if namespace != nil && *namespace != "" {
			opts = append(opts, client.InNamespace(*namespace))
		}
		return listNames(cmd.Context(), g, newList(), toComplete, opts...), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeWorkNames completes ManifestWork names (of *clusters when set)
// and, unless clusters are given, ManifestWorkReplicaSet names (of
// *namespace when set).
func completeWorkNames(g *globalOptions, clusters *[]string, namespace *string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx := cmd.Context()
		var names []string
		if *namespace == "" {
			if len(*clusters) == 0 {
				names = listNames(ctx, g, &workv1.ManifestWorkList{}, toComplete)
			}
			for _, cl := range *clusters {
				names = append(names, listNames(ctx, g, &workv1.ManifestWorkList{}, toComplete, client.InNamespace(cl))...)
			}
		}
		if len(*clusters) == 0 {
			var opts []client.ListOption
			if *namespace != "" {
				opts = append(opts, client.InNamespace(*namespace))
			}
			names = append(names, listNames(ctx, g, &workv1alpha1.ManifestWorkReplicaSetList{}, toComplete, opts...)...)
		}
		slices.Sort(names)
		return slices.Compact(names), cobra.ShellCompDirectiveNoFileComp
	}
}

// listNames lists objects on the hub and returns the names that start with
// prefix; nothing when the hub cannot be reached, as completion must not
// print errors into the shell.
func listNames(ctx context.Context, g *globalOptions, list client.ObjectList, prefix string, opts ...client.ListOption) []string {
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := g.clientsFor(hubSide)
	if err != nil {
		return nil
	}
	if err := c.ctrl.List(ctx, list, opts...); err != nil {
		return nil
	}
	var names []string
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		if m, err := meta.Accessor(o); err == nil && strings.HasPrefix(m.GetName(), prefix) {
			names = append(names, m.GetName())
		}
		return nil
	})
	return names
}

// addNameCompletions completes object names from the hub on the commands
// that take a name and do not complete one yet, whichever file adds them.
func addNameCompletions(g *globalOptions, root *cobra.Command) {
	lists := map[string]func() client.ObjectList{
		"flotilla get placements":    func() client.ObjectList { return &clusterv1beta1.PlacementList{} },
		"flotilla get clustersets":   func() client.ObjectList { return &clusterv1beta2.ManagedClusterSetList{} },
		"flotilla describe policy":   func() client.ObjectList { return &policyv1.PolicyList{} },
		"flotilla clusterset set":    func() client.ObjectList { return &clusterv1beta2.ManagedClusterSetList{} },
		"flotilla clusterset bind":   func() client.ObjectList { return &clusterv1beta2.ManagedClusterSetList{} },
		"flotilla clusterset unbind": func() client.ObjectList { return &clusterv1beta2.ManagedClusterSetList{} },
	}
	walkCommands(root, func(c *cobra.Command) {
		newList := lists[c.CommandPath()]
		if newList == nil || c.ValidArgsFunction != nil {
			return
		}
		c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var opts []client.ListOption
			if f := cmd.Flags().Lookup("namespace"); f != nil && f.Value.String() != "" {
				opts = append(opts, client.InNamespace(f.Value.String()))
			}
			return listNames(cmd.Context(), g, newList(), toComplete, opts...), cobra.ShellCompDirectiveNoFileComp
		}
	})
}

func walkCommands(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walkCommands(sub, f)
	}
}
