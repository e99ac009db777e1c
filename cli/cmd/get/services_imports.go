package get

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/servicesview"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

type getServiceImportsOptions struct {
	*cmdutil.Globals
	serviceFilter
}

func newGetServiceImportsCommand(g *cmdutil.Globals) *cobra.Command {
	o := &getServiceImportsOptions{Globals: g}
	cmd := &cobra.Command{
		Use:     "serviceimports [[NAMESPACE/]NAME...]",
		Aliases: []string{"serviceimport", "svcim", "svcimport", "importedservices", "importedservice", "imsvc"},
		Short:   "List the multi-cluster services of each cluster set: who exports them, who imports them",
		Long: `List the multi-cluster services of the cluster sets, as the hub merges them
from the member clusters' exports (an ImportedService per set and Service,
in the set's hub namespace flotilla-clusterset-SET): the set, the Service's
namespace and name, the merged type and ports, the clusters that export it
(those the hub has lost marked unavailable: their endpoints are left out),
the clusters that import it (every member of the set: each has a
ServiceImport of that name, and resolves NAME.NAMESPACE.svc.clusterset.local),
and the ready/total endpoints across the exporters.

With --clusters, only the services those clusters import (those of their
sets). The cluster lists show the first few clusters; -o wide shows all.
NAME is a Service name, in any namespace unless -n or NAMESPACE/ says.
-o json and -o yaml print the ImportedService objects: the object itself
when one NAME matches one, else an ImportedServiceList.`,
		Example: `  flotilla get serviceimports
  flotilla get serviceimports --clusterset shop -o wide
  flotilla get serviceimports --clusters cluster3
  flotilla get svcim shop/web -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(o.output, cmdutil.OutputWide, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			names, err := parseServiceNames(args, o.namespace)
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), names)
		},
	}
	o.addFlags(g, cmd, "only the services these clusters import, comma separated")
	return cmd
}

// importsView is what get serviceimports reads from the hub.
type importsView struct {
	Imports  []mcsv1alpha1.ImportedService
	Sets     []clusterv1beta2.ManagedClusterSet
	Clusters []clusterv1.ManagedCluster
}

// readImports reads the ImportedServices of every set namespace (or of the
// sets named), with the sets and clusters to name the importers.
func readImports(ctx context.Context, c *cmdutil.Clients, sets []string) (*importsView, error) {
	v := &importsView{}
	var lists []*mcsv1alpha1.ImportedServiceList
	if len(sets) == 0 {
		l := &mcsv1alpha1.ImportedServiceList{}
		if err := c.Ctrl.List(ctx, l); err != nil {
			return nil, cmdutil.ExplainClusterAPI(err, c, "list ImportedServices")
		}
		lists = append(lists, l)
	}
	for _, s := range sets {
		l := &mcsv1alpha1.ImportedServiceList{}
		if err := c.Ctrl.List(ctx, l, client.InNamespace(mcs.SetNamespace(s))); err != nil {
			return nil, cmdutil.ExplainClusterAPI(err, c, "list ImportedServices of cluster set "+s)
		}
		lists = append(lists, l)
	}
	for _, l := range lists {
		for _, is := range l.Items {
			// Only the hub's own, in the namespace of the set they name.
			if is.Namespace == mcs.SetNamespace(is.Spec.ClusterSet) {
				v.Imports = append(v.Imports, is)
			}
		}
	}
	sl := &clusterv1beta2.ManagedClusterSetList{}
	if err := c.Ctrl.List(ctx, sl); err != nil {
		return nil, cmdutil.ExplainClusterAPI(err, c, "list ManagedClusterSets")
	}
	cl := &clusterv1.ManagedClusterList{}
	if err := c.Ctrl.List(ctx, cl); err != nil {
		return nil, cmdutil.ExplainClusterAPI(err, c, "list ManagedClusters")
	}
	v.Sets, v.Clusters = sl.Items, cl.Items
	return v, nil
}

// Filter keeps the imports of names under the filters, sorted by set,
// namespace and name.
func (v *importsView) Filter(names []serviceName, f serviceFilter) []mcsv1alpha1.ImportedService {
	var clusterSets []string
	for _, name := range f.clusters {
		i := slices.IndexFunc(v.Clusters, func(mc clusterv1.ManagedCluster) bool { return mc.Name == name })
		if i >= 0 {
			if s := servicesview.ClusterSetOf(&v.Clusters[i], v.Sets); s != "" {
				clusterSets = append(clusterSets, s)
			}
		}
	}
	var out []mcsv1alpha1.ImportedService
	for _, is := range v.Imports {
		if !matches(names, f.namespace, is.Spec.Namespace, is.Spec.Name) {
			continue
		}
		if len(f.clusterSets) > 0 && !slices.Contains(f.clusterSets, is.Spec.ClusterSet) {
			continue
		}
		if len(f.clusters) > 0 && !slices.Contains(clusterSets, is.Spec.ClusterSet) {
			continue
		}
		out = append(out, is)
	}
	slices.SortFunc(out, func(a, b mcsv1alpha1.ImportedService) int {
		return strings.Compare(a.Spec.ClusterSet+"\x00"+a.Spec.Namespace+"\x00"+a.Spec.Name, b.Spec.ClusterSet+"\x00"+b.Spec.Namespace+"\x00"+b.Spec.Name)
	})
	return out
}

// Table renders imports as table rows; wide names every cluster.
func (v *importsView) Table(items []mcsv1alpha1.ImportedService, now time.Time, wide bool) (header []string, rows [][]string) {
	header = []string{"CLUSTERSET", "NAMESPACE", "NAME", "TYPE", "PORTS", "EXPORTED BY", "IMPORTED BY", "ENDPOINTS", "AGE"}
	for i := range items {
		is := &items[i]
		rows = append(rows, []string{
			is.Spec.ClusterSet, is.Spec.Namespace, is.Spec.Name, string(is.Spec.Type),
			servicesview.PortsColumn(is.Spec.Ports),
			membersColumn(servicesview.ExportersColumn(is), wide),
			membersColumn(servicesview.Members(is.Spec.ClusterSet, v.Sets, v.Clusters), wide),
			servicesview.ImportEndpointsColumn(is),
			cmdutil.AgeColumn(is.CreationTimestamp, now),
		})
	}
	return header, rows
}

func (o *getServiceImportsOptions) run(ctx context.Context, names []serviceName) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	v, err := readImports(ctx, c, o.clusterSets)
	if err != nil {
		return err
	}
	for _, name := range o.clusters {
		if !slices.ContainsFunc(v.Clusters, func(mc clusterv1.ManagedCluster) bool { return mc.Name == name }) {
			return fmt.Errorf("cluster %s does not exist on %s (see `flotilla get clusters` for the names)", name, c.Where)
		}
	}
	items := v.Filter(names, o.serviceFilter)
	for _, n := range names {
		if !slices.ContainsFunc(items, func(is mcsv1alpha1.ImportedService) bool {
			return is.Spec.Name == n.name && (n.namespace == "" || is.Spec.Namespace == n.namespace)
		}) {
			return importNotFound(n, o.serviceFilter, c.Where)
		}
	}
	switch o.output {
	case cmdutil.OutputJSON, cmdutil.OutputYAML:
		gvk := mcsv1alpha1.GroupVersion.WithKind("ImportedService")
		return cmdutil.PrintFound(o.Streams.Out, o.output, cmdutil.AsFound(items, gvk), cmdutil.ListKind(gvk), len(names) == 1 && len(items) == 1)
	}
	if len(items) == 0 {
		o.Notef("No cluster set imports a service%s yet: a service is imported into every member of a cluster set once a member exports it (see docs/services.md).", o.filterSuffix("into"))
		return nil
	}
	header, rows := v.Table(items, time.Now(), o.output == cmdutil.OutputWide)
	return cmdutil.PrintTable(o.Streams.Out, header, rows)
}

// importNotFound says that no set imports n (under the filters), and why that may be.
func importNotFound(n serviceName, f serviceFilter, where string) error {
	what := "Service " + n.name
	if n.namespace != "" {
		what, f.namespace = "Service "+n.String(), ""
	}
	return fmt.Errorf("no cluster set imports %s%s: there is no such ImportedService on %s (see `flotilla get serviceimports` for the names).\n"+
		"A service is imported once a member of an exclusive cluster set exports it: `flotilla get serviceexports %s` shows who exports it and into which set",
		what, f.filterSuffix("into"), where, n.name)
}
