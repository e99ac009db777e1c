package cmdutil

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// CompleteClusterNames completes ManagedCluster names from the hub.
func CompleteClusterNames(g *Globals) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		c, err := g.ClientsFor(HubSide)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list := &clusterv1.ManagedClusterList{}
		if err := c.Ctrl.List(cmd.Context(), list); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := make([]string, 0, len(list.Items))
		for _, mc := range list.Items {
			if strings.HasPrefix(mc.Name, toComplete) {
				names = append(names, mc.Name)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// CompleteObjectNames completes the names of the hub's objects of one
// kind, in *namespace when namespace is given and set, else everywhere.
func CompleteObjectNames(g *Globals, newList func() client.ObjectList, namespace *string) cobra.CompletionFunc {
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

// CompleteWorkNames completes ManifestWork names (of *clusters when set)
// and, unless clusters are given, ManifestWorkReplicaSet names (of
// *namespace when set).
func CompleteWorkNames(g *Globals, clusters *[]string, namespace *string) cobra.CompletionFunc {
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
func listNames(ctx context.Context, g *Globals, list client.ObjectList, prefix string, opts ...client.ListOption) []string {
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := g.ClientsFor(HubSide)
	if err != nil {
		return nil
	}
	if err := c.Ctrl.List(ctx, list, opts...); err != nil {
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

// AddNameCompletions completes object names from the hub on the commands
// that take a name and do not complete one yet, whichever file adds them.
func AddNameCompletions(g *Globals, root *cobra.Command) {
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
