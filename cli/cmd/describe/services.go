package describe

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/servicesview"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// withServiceDescribes adds `describe serviceexport` and `describe serviceimport`.
func withServiceDescribes(g *cmdutil.Globals, describe *cobra.Command) *cobra.Command {
	describe.AddCommand(newDescribeServiceExportCommand(g), newDescribeServiceImportCommand(g))
	return describe
}

// serviceArg reads NAMESPACE/NAME, or NAME with -n (else the kubeconfig's
// namespace, else default), as kubectl names a namespaced object.
func serviceArg(g *cmdutil.Globals, arg, namespace string) (ns, name string, err error) {
	ns, name, found := strings.Cut(arg, "/")
	if !found {
		return g.NamespaceFlag(namespace), arg, nil
	}
	if namespace != "" && namespace != ns {
		return "", "", fmt.Errorf("%s names namespace %s, but -n says %s: give one of them", arg, ns, namespace)
	}
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("%q is not a Service: give NAMESPACE/NAME, or NAME -n NAMESPACE", arg)
	}
	return ns, name, nil
}

// fleetView is what the services describes read from the hub besides the
// objects described.
type fleetView struct {
	sets     []clusterv1beta2.ManagedClusterSet
	clusters []clusterv1.ManagedCluster
	exports  []mcsv1alpha1.ExportedService
	imports  []mcsv1alpha1.ImportedService
}

// readServiceView reads every export and import of Service ns/name, with
// the sets and clusters.
func readServiceView(ctx context.Context, c *cmdutil.Clients, ns, name string) (*fleetView, error) {
	v := &fleetView{}
	sel := client.MatchingLabels{mcs.ServiceNamespaceLabel: ns, mcs.ServiceNameLabel: name}
	el := &mcsv1alpha1.ExportedServiceList{}
	if err := c.Ctrl.List(ctx, el, sel); err != nil {
		return nil, cmdutil.ExplainClusterAPI(err, c, "list ExportedServices")
	}
	for _, es := range el.Items {
		if es.Spec.Namespace == ns && es.Spec.Name == name {
			v.exports = append(v.exports, es)
		}
	}
	il := &mcsv1alpha1.ImportedServiceList{}
	if err := c.Ctrl.List(ctx, il, sel); err != nil {
		return nil, cmdutil.ExplainClusterAPI(err, c, "list ImportedServices")
	}
	for _, is := range il.Items {
		if is.Spec.Namespace == ns && is.Spec.Name == name && is.Namespace == mcs.SetNamespace(is.Spec.ClusterSet) {
			v.imports = append(v.imports, is)
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
	v.sets, v.clusters = sl.Items, cl.Items
	slices.SortFunc(v.exports, func(a, b mcsv1alpha1.ExportedService) int { return strings.Compare(a.Namespace, b.Namespace) })
	slices.SortFunc(v.imports, func(a, b mcsv1alpha1.ImportedService) int {
		return strings.Compare(a.Spec.ClusterSet, b.Spec.ClusterSet)
	})
	return v, nil
}

func (v *fleetView) importOf(set string) *mcsv1alpha1.ImportedService {
	for i := range v.imports {
		if v.imports[i].Spec.ClusterSet == set {
			return &v.imports[i]
		}
	}
	return nil
}

type describeServiceOptions struct {
	*cmdutil.Globals
	namespace   string
	clusters    []string
	clusterSets []string
	output      string
}

func newDescribeServiceExportCommand(g *cmdutil.Globals) *cobra.Command {
	o := &describeServiceOptions{Globals: g}
	cmd := &cobra.Command{
		Use:     "serviceexport NAMESPACE/NAME [--clusters NAME[,NAME...]]",
		Aliases: []string{"serviceexports", "svcex", "svcexport", "exportedservice", "exsvc"},
		Short:   "Show a service's exports: each cluster's endpoints, the merged spec and the conflict verdicts with what to do",
		Long: `Show every cluster's export of Service NAMESPACE/NAME (or only those of
--clusters), as the clusters' agents report them to the hub: when the
ServiceExport was made, the Service's type, ports and other properties, each
endpoint with its readiness, the cluster set it goes into, and the hub's
verdict (the Conflict condition with its reasons and message, or the
cluster being in no cluster set), with what to do about it. Then the merged
spec of each set the service is imported into: what every member cluster's
ServiceImport says.

A ServiceExport that is not valid (no such Service, or an ExternalName
Service) is not reported to the hub: look at its Valid condition in the
cluster. -o json and -o yaml print the ExportedService objects.`,
		Example: `  flotilla describe serviceexport shop/web
  flotilla describe serviceexport web -n shop --clusters cluster1
  flotilla describe svcex shop/web -o yaml`,
		Args: exactlyOneName("exported Service", "flotilla describe serviceexport NAMESPACE/NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(o.output, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			return o.runExport(cmd.Context(), args[0])
		},
	}
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "", "the Service's namespace (or give NAMESPACE/NAME)")
	cmdutil.AddClustersFlag(g, cmd, &o.clusters, "only the exports of these clusters, comma separated")
	cmdutil.AddOutputFlag(cmd, &o.output, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

func (o *describeServiceOptions) runExport(ctx context.Context, arg string) error {
	ns, name, err := serviceArg(o.Globals, arg, o.namespace)
	if err != nil {
		return err
	}
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	v, err := readServiceView(ctx, c, ns, name)
	if err != nil {
		return err
	}
	var exports []mcsv1alpha1.ExportedService
	for _, es := range v.exports {
		if len(o.clusters) == 0 || slices.Contains(o.clusters, es.Namespace) {
			exports = append(exports, es)
		}
	}
	if len(exports) == 0 {
		return exportMissing(ns, name, o.clusters, v, c.Where)
	}
	if o.output != cmdutil.OutputText {
		gvk := mcsv1alpha1.GroupVersion.WithKind("ExportedService")
		return cmdutil.PrintFound(o.Streams.Out, o.output, cmdutil.AsFound(exports, gvk), cmdutil.ListKind(gvk), len(exports) == 1)
	}
	return writeServiceExportDescription(o.Streams.Out, ns, name, exports, v, time.Now())
}

// exportMissing says that no cluster (of clusters) exports ns/name, what
// does, and how to export it.
func exportMissing(ns, name string, clusters []string, v *fleetView, where string) error {
	svc := ns + "/" + name
	if len(clusters) > 0 && len(v.exports) > 0 {
		var by []string
		for _, es := range v.exports {
			by = append(by, es.Namespace)
		}
		return fmt.Errorf("cluster %s does not export Service %s; %s do (see `flotilla describe serviceexport %s`)", strings.Join(clusters, ", "), svc, strings.Join(by, ", "), svc)
	}
	return fmt.Errorf("no cluster exports Service %s: there is no ExportedService for it on %s (see `flotilla get serviceexports` for what is exported).\n"+
		"To export it, create a ServiceExport named %s in namespace %s of a cluster that runs the Service; "+
		"if there is one, its Valid condition in that cluster says why it is not exported (no such Service, or an ExternalName Service)", svc, where, name, ns)
}

// writeServiceExportDescription writes what `describe serviceexport` shows.
func writeServiceExportDescription(w io.Writer, ns, name string, exports []mcsv1alpha1.ExportedService, v *fleetView, now time.Time) error {
	var by []string
	for _, es := range exports {
		by = append(by, es.Namespace)
	}
	fmt.Fprintf(w, "Service:      %s/%s\nExported by:  %s\n", ns, name, strings.Join(by, ", "))
	var sets []string
	for i := range exports {
		es := &exports[i]
		fmt.Fprintf(w, "\nCluster %s:\n", es.Namespace)
		fmt.Fprintf(w, "  Exported:         %s ago (ServiceExport created %s)\n", cmdutil.AgeColumn(es.Spec.ExportCreationTimestamp, now), es.Spec.ExportCreationTimestamp.UTC().Format(time.RFC3339))
		writeProperties(w, "  ", &es.Spec.ServiceProperties)
		fmt.Fprintf(w, "  Cluster set:      %s\n", servicesview.ClusterSetColumn(es))
		if err := writeEndpoints(w, "  ", es.Spec.Endpoints); err != nil {
			return err
		}
		if err := writeIndentedConditions(w, "  ", es.Status.Conditions, "(none yet: the hub has not judged this export)"); err != nil {
			return err
		}
		if advice := servicesview.Advice(es); len(advice) > 0 {
			fmt.Fprintln(w, "  What to do:")
			for _, a := range advice {
				fmt.Fprintf(w, "    %s\n", a)
			}
		}
		if s := es.Status.ClusterSet; s != "" && !slices.Contains(sets, s) {
			sets = append(sets, s)
		}
	}
	for _, s := range sets {
		is := v.importOf(s)
		fmt.Fprintf(w, "\nMerged in cluster set %s (what every member's ServiceImport says):\n", s)
		if is == nil {
			fmt.Fprintf(w, "  (not merged yet: the hub has written no ImportedService %s in namespace %s)\n", mcs.ObjectName(ns, name), mcs.SetNamespace(s))
			continue
		}
		writeProperties(w, "  ", &is.Spec.ServiceProperties)
		fmt.Fprintf(w, "  Exported by:      %s\n", cmdutil.OrNone(strings.Join(servicesview.ExportersColumn(is), ", ")))
		fmt.Fprintf(w, "  Imported by:      %s\n", cmdutil.OrNone(strings.Join(servicesview.Members(s, v.sets, v.clusters), ", ")))
		fmt.Fprintf(w, "  More:             flotilla describe serviceimport %s/%s --clusterset %s\n", ns, name, s)
	}
	return nil
}

// writeProperties writes the properties every export must agree on.
func writeProperties(w io.Writer, indent string, p *mcsv1alpha1.ServiceProperties) {
	fmt.Fprintf(w, "%sType:             %s\n", indent, p.Type)
	fmt.Fprintf(w, "%sPorts:            %s\n", indent, servicesview.PortsColumn(p.Ports))
	affinity := string(p.SessionAffinity)
	if affinity == "" {
		affinity = "None"
	}
	if p.SessionAffinityConfig != nil && p.SessionAffinityConfig.ClientIP != nil && p.SessionAffinityConfig.ClientIP.TimeoutSeconds != nil {
		affinity += fmt.Sprintf(" (timeout %ds)", *p.SessionAffinityConfig.ClientIP.TimeoutSeconds)
	}
	fmt.Fprintf(w, "%sSession affinity: %s\n", indent, affinity)
	if p.InternalTrafficPolicy != nil {
		fmt.Fprintf(w, "%sTraffic policy:   %s (internal)\n", indent, *p.InternalTrafficPolicy)
	}
	if p.TrafficDistribution != nil {
		fmt.Fprintf(w, "%sDistribution:     %s\n", indent, *p.TrafficDistribution)
	}
	if len(p.IPFamilies) > 0 {
		fams := make([]string, len(p.IPFamilies))
		for i, f := range p.IPFamilies {
			fams[i] = string(f)
		}
		fmt.Fprintf(w, "%sIP families:      %s\n", indent, strings.Join(fams, ", "))
	}
	if len(p.ExportedLabels) > 0 {
		fmt.Fprintf(w, "%sLabels:           %s\n", indent, cmdutil.LabelsColumn(p.ExportedLabels))
	}
	if len(p.ExportedAnnotations) > 0 {
		fmt.Fprintf(w, "%sAnnotations:      %s\n", indent, cmdutil.LabelsColumn(p.ExportedAnnotations))
	}
}

// writeEndpoints writes a cluster's endpoints, each with its readiness.
func writeEndpoints(w io.Writer, indent string, groups []mcsv1alpha1.EndpointGroup) error {
	ready, total := servicesview.CountEndpoints(groups)
	fmt.Fprintf(w, "%sEndpoints:        %d ready of %d\n", indent, ready, total)
	if total == 0 {
		return nil
	}
	var rows [][]string
	for i := range groups {
		for _, e := range mcs.Endpoints(&groups[i]) {
			readyCol := "not ready"
			if servicesview.EndpointReady(e) {
				readyCol = "ready"
			}
			var hostname, zone string
			if e.Hostname != nil {
				hostname = *e.Hostname
			}
			if e.Zone != nil {
				zone = *e.Zone
			}
			rows = append(rows, []string{indent + "  " + strings.Join(e.Addresses, ","), readyCol, cmdutil.OrDash(hostname), cmdutil.OrDash(zone)})
		}
	}
	return cmdutil.PrintTable(w, []string{indent + "  ADDRESS", "READY", "HOSTNAME", "ZONE"}, rows)
}

// writeIndentedConditions writes a Conditions: section at indent.
func writeIndentedConditions(w io.Writer, indent string, conds []metav1.Condition, none string) error {
	fmt.Fprintf(w, "%sConditions:\n", indent)
	if len(conds) == 0 {
		fmt.Fprintf(w, "%s  %s\n", indent, none)
		return nil
	}
	rows := make([][]string, 0, len(conds))
	for _, c := range conds {
		rows = append(rows, []string{indent + "  " + c.Type, string(c.Status), cmdutil.OrDash(c.Reason), cmdutil.OrDash(c.Message)})
	}
	return cmdutil.PrintTable(w, []string{indent + "  TYPE", "STATUS", "REASON", "MESSAGE"}, rows)
}
