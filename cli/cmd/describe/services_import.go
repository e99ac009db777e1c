package describe

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/servicesview"
)

func newDescribeServiceImportCommand(g *cmdutil.Globals) *cobra.Command {
	o := &describeServiceOptions{Globals: g}
	cmd := &cobra.Command{
		Use:     "serviceimport NAMESPACE/NAME [--clusterset SET]",
		Aliases: []string{"serviceimports", "svcim", "svcimport", "importedservice", "imsvc"},
		Short:   "Show a multi-cluster service of a cluster set: the merged spec, who exports and imports it, each cluster's endpoints, the conflicts",
		Long: `Show the multi-cluster service NAMESPACE/NAME of each cluster set that
imports it (or of --clusterset only), as the hub merged it from the members'
exports: the merged type, ports and other properties (what every member
cluster's ServiceImport says), the clusters that import it (every member of
the set), each exporting cluster with its endpoints and their readiness (a
cluster the hub has lost is unavailable: its endpoints are left out
everywhere), and the conflict verdicts of the exports with what to do.

Every member resolves NAME.NAMESPACE.svc.clusterset.local once its CoreDNS
has the multicluster option (docs/services.md). -o json and -o yaml print
the ImportedService objects.`,
		Example: `  flotilla describe serviceimport shop/web
  flotilla describe serviceimport web -n shop --clusterset shop
  flotilla describe svcim shop/web -o yaml`,
		Args: exactlyOneName("imported Service", "flotilla describe serviceimport NAMESPACE/NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(o.output, cmdutil.OutputJSON, cmdutil.OutputYAML); err != nil {
				return err
			}
			return o.runImport(cmd.Context(), args[0])
		},
	}
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "", "the Service's namespace (or give NAMESPACE/NAME)")
	cmd.Flags().StringSliceVar(&o.clusterSets, cmdutil.ClusterSetFlag, nil, "only the service of these ManagedClusterSets, comma separated")
	cmdutil.AliasClusterSetFlag(cmd)
	cmdutil.AddOutputFlag(cmd, &o.output, cmdutil.OutputJSON, cmdutil.OutputYAML)
	return cmd
}

func (o *describeServiceOptions) runImport(ctx context.Context, arg string) error {
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
	var imports []mcsv1alpha1.ImportedService
	for _, is := range v.imports {
		if len(o.clusterSets) == 0 || slices.Contains(o.clusterSets, is.Spec.ClusterSet) {
			imports = append(imports, is)
		}
	}
	if len(imports) == 0 {
		return importMissing(ns, name, o.clusterSets, v, c.Where)
	}
	if o.output != cmdutil.OutputText {
		gvk := mcsv1alpha1.GroupVersion.WithKind("ImportedService")
		return cmdutil.PrintFound(o.Streams.Out, o.output, cmdutil.AsFound(imports, gvk), cmdutil.ListKind(gvk), len(imports) == 1)
	}
	for i := range imports {
		if i > 0 {
			fmt.Fprintln(o.Streams.Out)
		}
		if err := writeServiceImportDescription(o.Streams.Out, &imports[i], v, time.Now()); err != nil {
			return err
		}
	}
	return nil
}

// importMissing says that no set (of sets) imports ns/name, and why: who
// exports it, and where they are.
func importMissing(ns, name string, sets []string, v *fleetView, where string) error {
	svc := ns + "/" + name
	if len(sets) > 0 && len(v.imports) > 0 {
		var in []string
		for _, is := range v.imports {
			in = append(in, is.Spec.ClusterSet)
		}
		return fmt.Errorf("cluster set %s does not import Service %s; %s do (see `flotilla describe serviceimport %s`)", strings.Join(sets, ", "), svc, strings.Join(in, ", "), svc)
	}
	msg := fmt.Sprintf("no cluster set imports Service %s: there is no ImportedService for it on %s (see `flotilla get serviceimports` for the names).\n", svc, where)
	if len(v.exports) == 0 {
		return fmt.Errorf("%sNo cluster exports it either: create a ServiceExport named %s in namespace %s beside the Service in a member cluster of a cluster set", msg, name, ns)
	}
	var notInSet, pending []string
	for i := range v.exports {
		switch servicesview.ExportState(&v.exports[i]) {
		case servicesview.StateNotInClusterSet:
			notInSet = append(notInSet, v.exports[i].Namespace)
		default:
			pending = append(pending, v.exports[i].Namespace)
		}
	}
	if len(notInSet) > 0 {
		msg += fmt.Sprintf("It is exported by %s, in no exclusive cluster set: put them into one with `flotilla clusterset set SET --clusters %s`. ", strings.Join(notInSet, ", "), strings.Join(notInSet, ","))
	}
	if len(pending) > 0 {
		msg += fmt.Sprintf("It is exported by %s, not merged yet: `flotilla describe serviceexport %s` shows the hub's verdict.", strings.Join(pending, ", "), svc)
	}
	return fmt.Errorf("%s", strings.TrimSpace(msg))
}

// writeServiceImportDescription writes what `describe serviceimport` shows of one set's import.
func writeServiceImportDescription(w io.Writer, is *mcsv1alpha1.ImportedService, v *fleetView, now time.Time) error {
	set := is.Spec.ClusterSet
	fmt.Fprintf(w, "Service:          %s/%s\nCluster set:      %s (hub namespace %s)\nAge:              %s\n", is.Spec.Namespace, is.Spec.Name, set, is.Namespace, cmdutil.AgeColumn(is.CreationTimestamp, now))
	fmt.Fprintf(w, "DNS name:         %s.%s.svc.clusterset.local\n", is.Spec.Name, is.Spec.Namespace)
	fmt.Fprintln(w, "Merged spec:")
	writeProperties(w, "  ", &is.Spec.ServiceProperties)
	fmt.Fprintf(w, "Imported by:      %s\n", cmdutil.OrNone(strings.Join(servicesview.Members(set, v.sets, v.clusters), ", ")))
	fmt.Fprintf(w, "Exported by:      %s\n", cmdutil.OrNone(strings.Join(servicesview.ExportersColumn(is), ", ")))
	fmt.Fprintln(w, "Exporting clusters:")
	if len(is.Spec.Clusters) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, cl := range is.Spec.Clusters {
		state := "available"
		if !cl.Available {
			state = "unavailable: the hub has lost the cluster's lease, so its endpoints are left out everywhere"
		}
		fmt.Fprintf(w, "  %s (%s, export generation %d)\n", cl.Name, state, cl.Generation)
		if err := writeEndpoints(w, "    ", cl.Endpoints); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "Conflicts:")
	var conflicted bool
	for i := range v.exports {
		es := &v.exports[i]
		if es.Status.ClusterSet != set {
			continue
		}
		c := meta.FindStatusCondition(es.Status.Conditions, mcsv1alpha1.ConditionConflict)
		switch {
		case c == nil:
			fmt.Fprintf(w, "  %s: %s (the hub has not judged it yet)\n", es.Namespace, servicesview.Pending)
		case servicesview.ExportState(es) == servicesview.StateConflict:
			conflicted = true
			fmt.Fprintf(w, "  %s: %s: %s\n", es.Namespace, c.Reason, c.Message)
		default:
			fmt.Fprintf(w, "  %s: none\n", es.Namespace)
		}
	}
	if conflicted {
		fmt.Fprintln(w, "What to do:")
		seen := map[string]bool{}
		for i := range v.exports {
			es := &v.exports[i]
			if es.Status.ClusterSet != set || servicesview.ExportState(es) != servicesview.StateConflict {
				continue
			}
			for _, a := range servicesview.Advice(es) {
				if !seen[a] {
					seen[a] = true
					fmt.Fprintf(w, "  %s\n", a)
				}
			}
		}
	}
	return nil
}
