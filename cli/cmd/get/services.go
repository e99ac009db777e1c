package get

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/servicesview"
)

// withServiceGets adds `get serviceexports` and `get serviceimports`.
func withServiceGets(g *cmdutil.Globals, get *cobra.Command) *cobra.Command {
	get.AddCommand(newGetServiceExportsCommand(g), newGetServiceImportsCommand(g))
	return get
}

// serviceFilter is what get serviceexports and get serviceimports select by.
type serviceFilter struct {
	namespace   string
	clusters    []string
	clusterSets []string
	output      string
}

// addFlags adds -n, --clusters (with its --cluster spelling),
// --clusterset (with its --clustersets spelling) and -o.
func (f *serviceFilter) addFlags(g *cmdutil.Globals, cmd *cobra.Command, clustersUsage string) {
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "", "only services of this namespace (in the clusters); default: every namespace")
	cmdutil.AddClustersFlag(g, cmd, &f.clusters, clustersUsage)
	cmd.Flags().StringSliceVar(&f.clusterSets, cmdutil.ClusterSetFlag, nil, "only services of these ManagedClusterSets, comma separated")
	cmdutil.AddOutputFlag(cmd, &f.output, cmdutil.OutputWide, cmdutil.OutputJSON, cmdutil.OutputYAML)
	cmdutil.AliasClusterSetFlag(cmd)
}

// serviceName is a NAME argument: [NAMESPACE/]NAME of a Service.
type serviceName struct{ namespace, name string }

func (n serviceName) String() string { return n.namespace + "/" + n.name }

// parseServiceNames reads NAME arguments; a name without a namespace is
// in namespace (-n), or in any namespace when that is empty.
func parseServiceNames(args []string, namespace string) ([]serviceName, error) {
	var out []serviceName
	for _, a := range args {
		ns, name, found := strings.Cut(a, "/")
		if !found {
			ns, name = namespace, a
		} else if namespace != "" && ns != namespace {
			return nil, fmt.Errorf("%s names namespace %s, but -n says %s: give one of them", a, ns, namespace)
		}
		if name == "" || strings.Contains(name, "/") {
			return nil, fmt.Errorf("%q is not a Service name: give NAME or NAMESPACE/NAME", a)
		}
		out = append(out, serviceName{namespace: ns, name: name})
	}
	return out, nil
}

// matches says whether the Service namespace/name is one of names (every
// Service when there are none), and the -n filter.
func matches(names []serviceName, filterNS, namespace, name string) bool {
	if filterNS != "" && namespace != filterNS {
		return false
	}
	if len(names) == 0 {
		return true
	}
	return slices.ContainsFunc(names, func(n serviceName) bool {
		return n.name == name && (n.namespace == "" || n.namespace == namespace)
	})
}

type getServiceExportsOptions struct {
	*cmdutil.Globals
	serviceFilter
}

func newGetServiceExportsCommand(g *cmdutil.Globals) *cobra.Command {
	o := &getServiceExportsOptions{Globals: g}
	cmd := &cobra.Command{
		Use:     "serviceexports [[NAMESPACE/]NAME...]",
		Aliases: []string{"serviceexport", "svcex", "svcexport", "exportedservices", "exportedservice", "exsvc"},
		Short:   "List the services the clusters export, with their endpoints and the hub's conflict verdicts",
		Long: `List every cluster's exported services, fleet-wide, as the clusters' agents
report them to the hub (an ExportedService per cluster and Service, made from
the ServiceExport in the cluster): the cluster, the Service's namespace and
name, its type (ClusterSetIP, or Headless for clusterIP: None) and ports, its
ready/total endpoints in that cluster, the cluster set it is imported into,
and the hub's conflict verdict against the set's other exports of the same
Service (the KEP's reasons, such as PortConflict, or none).

A ServiceExport that is not valid (no such Service, or an ExternalName
Service) is not reported to the hub: its Valid condition in the cluster says
why. See docs/services.md.

NAME is a Service name, in any namespace unless -n or NAMESPACE/ says.
-o json and -o yaml print the ExportedService objects: the object itself
when one NAME matches one, else an ExportedServiceList.`,
		Example: `  flotilla get serviceexports
  flotilla get serviceexports --clusters cluster1,cluster2
  flotilla get serviceexports web -n shop -o yaml
  flotilla get svcex --clusterset shop`,
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
	o.addFlags(g, cmd, "only the exports of these clusters, comma separated")
	return cmd
}

func (o *getServiceExportsOptions) run(ctx context.Context, names []serviceName) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	list := &mcsv1alpha1.ExportedServiceList{}
	if err := c.Ctrl.List(ctx, list); err != nil {
		return cmdutil.ExplainClusterAPI(err, c, "list ExportedServices")
	}
	items := filterExports(list.Items, names, o.serviceFilter)
	if len(names) > 0 {
		for _, n := range names {
			if !slices.ContainsFunc(items, func(es mcsv1alpha1.ExportedService) bool {
				return es.Spec.Name == n.name && (n.namespace == "" || es.Spec.Namespace == n.namespace)
			}) {
				return exportNotFound(n, o.serviceFilter, c.Where)
			}
		}
	}
	switch o.output {
	case cmdutil.OutputJSON, cmdutil.OutputYAML:
		gvk := mcsv1alpha1.GroupVersion.WithKind("ExportedService")
		return cmdutil.PrintFound(o.Streams.Out, o.output, cmdutil.AsFound(items, gvk), cmdutil.ListKind(gvk), len(names) == 1 && len(items) == 1)
	}
	if len(items) == 0 {
		o.Notef("No cluster exports a service%s yet: create a ServiceExport beside a Service in a member cluster of a cluster set (see docs/services.md).", o.filterSuffix("from"))
		return nil
	}
	header, rows := exportTable(items, time.Now())
	return cmdutil.PrintTable(o.Streams.Out, header, rows)
}

// filterSuffix says what the filters asked for, for messages.
func (f serviceFilter) filterSuffix(clusters string) string {
	var s []string
	if f.namespace != "" {
		s = append(s, "in namespace "+f.namespace)
	}
	if len(f.clusters) > 0 {
		s = append(s, clusters+" cluster "+strings.Join(f.clusters, ", "))
	}
	if len(f.clusterSets) > 0 {
		s = append(s, "into cluster set "+strings.Join(f.clusterSets, ", "))
	}
	if len(s) == 0 {
		return ""
	}
	return " " + strings.Join(s, " ")
}

// exportNotFound says that no cluster exports n (under the filters), and how to.
func exportNotFound(n serviceName, f serviceFilter, where string) error {
	what := "Service " + n.name
	if n.namespace != "" {
		what, f.namespace = "Service "+n.String(), ""
	}
	return fmt.Errorf("no cluster exports %s%s: there is no such ExportedService on %s (see `flotilla get serviceexports` for what is exported).\n"+
		"To export it, create a ServiceExport of the same name and namespace beside the Service in a cluster; "+
		"if you did, its Valid condition there says why it is not exported", what, f.filterSuffix("from"), where)
}

// filterExports keeps the exports of names under the filters, sorted by
// cluster, namespace and name.
func filterExports(items []mcsv1alpha1.ExportedService, names []serviceName, f serviceFilter) []mcsv1alpha1.ExportedService {
	var out []mcsv1alpha1.ExportedService
	for _, es := range items {
		if !matches(names, f.namespace, es.Spec.Namespace, es.Spec.Name) {
			continue
		}
		if len(f.clusters) > 0 && !slices.Contains(f.clusters, es.Namespace) {
			continue
		}
		if len(f.clusterSets) > 0 && !slices.Contains(f.clusterSets, es.Status.ClusterSet) {
			continue
		}
		out = append(out, es)
	}
	slices.SortFunc(out, func(a, b mcsv1alpha1.ExportedService) int {
		return strings.Compare(a.Namespace+"\x00"+a.Spec.Namespace+"\x00"+a.Spec.Name, b.Namespace+"\x00"+b.Spec.Namespace+"\x00"+b.Spec.Name)
	})
	return out
}

// exportTable renders exports as table rows.
func exportTable(items []mcsv1alpha1.ExportedService, now time.Time) (header []string, rows [][]string) {
	header = []string{"CLUSTER", "NAMESPACE", "NAME", "TYPE", "PORTS", "ENDPOINTS", "CLUSTERSET", "CONFLICT", "AGE"}
	for i := range items {
		es := &items[i]
		rows = append(rows, []string{
			es.Namespace, es.Spec.Namespace, es.Spec.Name, string(es.Spec.Type),
			servicesview.PortsColumn(es.Spec.Ports), servicesview.EndpointsColumn(es.Spec.Endpoints),
			servicesview.ClusterSetColumn(es), servicesview.ConflictColumn(es),
			cmdutil.AgeColumn(es.Spec.ExportCreationTimestamp, now),
		})
	}
	return header, rows
}
