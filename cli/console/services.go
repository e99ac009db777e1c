package console

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil/servicesview"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// The hub's objects of multi-cluster services: each cluster's exports in
// its namespace, each set's merged services in the set's namespace.
var (
	kindExports = kind{"ExportedServices", mcsv1alpha1.GroupName, "exportedservices", true, &mcsv1alpha1.ExportedService{}}
	kindImports = kind{"ImportedServices", mcsv1alpha1.GroupName, "importedservices", true, &mcsv1alpha1.ImportedService{}}
)

// servicesData is the cluster view's multi-cluster services section.
type servicesData struct {
	// ClusterSet is the exclusive set the cluster is a member of, "" for none.
	ClusterSet     string
	SetNamespace   string
	ExportsVisible bool
	Exports        []exportView
	ImportsVisible bool
	Imports        []importView
}

// exportView is one service the cluster exports, with the hub's verdict.
type exportView struct {
	Namespace, Name, Type, Ports, Endpoints string
	// State is Valid, Conflict, NotInClusterSet or Pending.
	State   string
	Reason  string
	Message string
}

// importView is one service of the cluster's set: the cluster imports it.
type importView struct {
	Namespace, Name, Type, Ports, Endpoints, DNSName string
	ExportedBy                                       string
	// ExportedHere: this cluster is one of the exporters.
	ExportedHere bool
}

// clusterServices reads the exports of cluster mc and the imports of its set.
func (s *server) clusterServices(ctx context.Context, mc *clusterv1.ManagedCluster) servicesData {
	var d servicesData
	sets := &clusterv1beta2.ManagedClusterSetList{}
	s.store.list(ctx, kindClusterSets, sets)
	d.ClusterSet = servicesview.ClusterSetOf(mc, sets.Items)
	if s.store.visibleIn(kindExports, mc.Name) {
		d.ExportsVisible = true
		list := &mcsv1alpha1.ExportedServiceList{}
		s.store.list(ctx, kindExports, list, client.InNamespace(mc.Name))
		for i := range list.Items {
			d.Exports = append(d.Exports, viewExport(&list.Items[i]))
		}
		slices.SortFunc(d.Exports, func(a, b exportView) int {
			return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
		})
	}
	if d.ClusterSet == "" {
		return d
	}
	d.SetNamespace = mcs.SetNamespace(d.ClusterSet)
	if s.store.visibleIn(kindImports, d.SetNamespace) {
		d.ImportsVisible = true
		list := &mcsv1alpha1.ImportedServiceList{}
		s.store.list(ctx, kindImports, list, client.InNamespace(d.SetNamespace))
		for i := range list.Items {
			is := &list.Items[i]
			if is.Spec.ClusterSet != d.ClusterSet {
				continue
			}
			d.Imports = append(d.Imports, importView{
				Namespace: is.Spec.Namespace, Name: is.Spec.Name, Type: string(is.Spec.Type),
				Ports: servicesview.PortsColumn(is.Spec.Ports), Endpoints: servicesview.ImportEndpointsColumn(is),
				DNSName:    is.Spec.Name + "." + is.Spec.Namespace + ".svc.clusterset.local",
				ExportedBy: strings.Join(servicesview.ExportersColumn(is), ", "),
				ExportedHere: slices.ContainsFunc(is.Spec.Clusters, func(c mcsv1alpha1.ImportedCluster) bool {
					return c.Name == mc.Name
				}),
			})
		}
		slices.SortFunc(d.Imports, func(a, b importView) int {
			return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
		})
	}
	return d
}

func viewExport(es *mcsv1alpha1.ExportedService) exportView {
	v := exportView{
		Namespace: es.Spec.Namespace, Name: es.Spec.Name, Type: string(es.Spec.Type),
		Ports: servicesview.PortsColumn(es.Spec.Ports), Endpoints: servicesview.EndpointsColumn(es.Spec.Endpoints),
		State: string(servicesview.ExportState(es)),
	}
	for _, t := range []string{mcsv1alpha1.ConditionInClusterSet, mcsv1alpha1.ConditionConflict} {
		c := meta.FindStatusCondition(es.Status.Conditions, t)
		if c == nil {
			continue
		}
		switch {
		case t == mcsv1alpha1.ConditionInClusterSet && v.State == string(servicesview.StateNotInClusterSet),
			t == mcsv1alpha1.ConditionConflict && v.State == string(servicesview.StateConflict):
			v.Reason, v.Message = c.Reason, c.Message
		}
	}
	if advice := servicesview.Advice(es); len(advice) > 0 && v.State != string(servicesview.StateValid) {
		v.Message = strings.TrimSpace(v.Message + " " + strings.Join(advice, " "))
	}
	return v
}
