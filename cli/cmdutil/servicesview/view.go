package servicesview

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// Placeholders of the columns, as kubectl writes them.
const (
	// None is a column with nothing to show.
	None = "<none>"
	// Pending is a column the hub has not filled in yet.
	Pending = "<pending>"
)

// PortsColumn shows ports as name:port/protocol (port/protocol for an
// unnamed port), comma separated; <none> when there are none.
func PortsColumn(ports []mcsv1alpha1.ServicePort) string {
	if len(ports) == 0 {
		return None
	}
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = PortString(p)
	}
	return strings.Join(s, ",")
}

// PortString is one port as PortsColumn shows it.
func PortString(p mcsv1alpha1.ServicePort) string {
	proto := string(p.Protocol)
	if proto == "" {
		proto = "TCP"
	}
	s := strconv.Itoa(int(p.Port)) + "/" + proto
	if p.Name != "" {
		s = p.Name + ":" + s
	}
	return s
}

// EndpointReady says whether an endpoint is ready: as for EndpointSlices,
// an unknown readiness counts as ready.
func EndpointReady(e discoveryv1.Endpoint) bool {
	return e.Conditions.Ready == nil || *e.Conditions.Ready
}

// CountEndpoints counts the ready and all endpoints of groups.
func CountEndpoints(groups []mcsv1alpha1.EndpointGroup) (ready, total int) {
	return mcs.CountEndpoints(groups)
}

// EndpointsColumn shows ready/total endpoints of groups.
func EndpointsColumn(groups []mcsv1alpha1.EndpointGroup) string {
	ready, total := CountEndpoints(groups)
	return fmt.Sprintf("%d/%d", ready, total)
}

// ImportEndpointsColumn shows ready/total endpoints of every exporting
// cluster of an import.
func ImportEndpointsColumn(is *mcsv1alpha1.ImportedService) string {
	var ready, total int
	for _, c := range is.Spec.Clusters {
		r, t := CountEndpoints(c.Endpoints)
		ready, total = ready+r, total+t
	}
	return fmt.Sprintf("%d/%d", ready, total)
}

// State is what the hub decided of an export, in one word.
type State string

// The states of an export.
const (
	// StateValid: imported into its cluster set, in agreement with the other exports.
	StateValid State = "Valid"
	// StateConflict: imported, but some property disagrees with the oldest export.
	StateConflict State = "Conflict"
	// StateNotInClusterSet: the cluster is in no exclusive cluster set, so nothing imports it.
	StateNotInClusterSet State = "NotInClusterSet"
	// StatePending: the hub has not judged the export yet.
	StatePending State = "Pending"
)

// ExportState is the hub's verdict on es.
func ExportState(es *mcsv1alpha1.ExportedService) State {
	if c := meta.FindStatusCondition(es.Status.Conditions, mcsv1alpha1.ConditionInClusterSet); c != nil && c.Status == metav1.ConditionFalse {
		return StateNotInClusterSet
	}
	c := meta.FindStatusCondition(es.Status.Conditions, mcsv1alpha1.ConditionConflict)
	switch {
	case c == nil:
		return StatePending
	case c.Status == metav1.ConditionTrue:
		return StateConflict
	case c.Status == metav1.ConditionFalse:
		return StateValid
	}
	return StatePending
}

// ClusterSetColumn shows the set es is imported into: <none> when its
// cluster is in none, <pending> before the hub has said.
func ClusterSetColumn(es *mcsv1alpha1.ExportedService) string {
	if es.Status.ClusterSet != "" {
		return es.Status.ClusterSet
	}
	if ExportState(es) == StatePending {
		return Pending
	}
	return None
}

// ConflictColumn shows the hub's conflict verdict on es: the reasons of a
// conflict, "none", "-" when the export is in no set (nothing to conflict
// with), <pending> before the hub has said.
func ConflictColumn(es *mcsv1alpha1.ExportedService) string {
	switch ExportState(es) {
	case StateConflict:
		return meta.FindStatusCondition(es.Status.Conditions, mcsv1alpha1.ConditionConflict).Reason
	case StateValid:
		return "none"
	case StateNotInClusterSet:
		return "-"
	}
	return Pending
}

// conflictFixes says, per conflict reason, which property differs.
var conflictFixes = map[string]string{
	"PortConflict":                  "the ports (a port of the same name or the same protocol and number differs)",
	"TypeConflict":                  "the type (clusterIP: None in some clusters, a cluster IP in others)",
	"SessionAffinityConflict":       "spec.sessionAffinity",
	"SessionAffinityConfigConflict": "spec.sessionAffinityConfig",
	"InternalTrafficPolicyConflict": "spec.internalTrafficPolicy",
	"TrafficDistributionConflict":   "spec.trafficDistribution",
	"IPFamilyConflict":              "spec.ipFamilies",
	"LabelsConflict":                "the ServiceExport's spec.exportedLabels",
	"AnnotationsConflict":           "the ServiceExport's spec.exportedAnnotations",
}

// ConflictReasons splits a Conflict condition's reason into its reasons.
func ConflictReasons(reason string) []string {
	var out []string
	for _, r := range strings.Split(reason, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// Advice says what to do about the hub's verdict on es, one sentence a
// line; nothing when there is nothing to do.
func Advice(es *mcsv1alpha1.ExportedService) []string {
	cluster := es.Namespace
	svc := es.Spec.Namespace + "/" + es.Spec.Name
	switch ExportState(es) {
	case StateNotInClusterSet:
		return []string{fmt.Sprintf("Cluster %s is in no exclusive ManagedClusterSet, so no cluster imports %s: put it into one with `flotilla clusterset set SET --clusters %s` (sets made with `flotilla create clusterset SET`; label-selector sets such as global do not count).", cluster, svc, cluster)}
	case StatePending:
		return []string{"The hub has not judged this export yet: if that lasts more than a few seconds, check that the hub runs (`flotilla get clusters` answers) and see its log."}
	case StateConflict:
		c := meta.FindStatusCondition(es.Status.Conditions, mcsv1alpha1.ConditionConflict)
		var lines []string
		for _, r := range ConflictReasons(c.Reason) {
			what, ok := conflictFixes[r]
			if !ok {
				what = "the property " + r + " names"
			}
			lines = append(lines, fmt.Sprintf("%s: make %s of %s the same in every exporting cluster; until then the oldest export's value is used everywhere.", r, what, svc))
		}
		return append(lines, fmt.Sprintf("Or stop exporting it from the clusters that disagree: delete ServiceExport %s there (`flotilla describe serviceimport %s` lists the exporters).", svc, svc))
	}
	return nil
}

// IsExclusive says whether set selects its members by the clusterset
// label, so that it qualifies as a multi-cluster services ClusterSet.
func IsExclusive(set *clusterv1beta2.ManagedClusterSet) bool {
	t := set.Spec.ClusterSelector.SelectorType
	return t == "" || t == clusterv1beta2.ExclusiveClusterSetLabel
}

// Members are the names of the clusters of exclusive set name, sorted:
// those labelled with it. Nothing when no exclusive set of that name is
// among sets.
func Members(name string, sets []clusterv1beta2.ManagedClusterSet, clusters []clusterv1.ManagedCluster) []string {
	i := slices.IndexFunc(sets, func(s clusterv1beta2.ManagedClusterSet) bool { return s.Name == name })
	if i < 0 || !IsExclusive(&sets[i]) {
		return nil
	}
	var members []string
	for _, mc := range clusters {
		if mc.Labels[clusterv1beta2.ClusterSetLabel] == name {
			members = append(members, mc.Name)
		}
	}
	slices.Sort(members)
	return members
}

// ClusterSetOf is the exclusive set cluster is a member of, or "".
func ClusterSetOf(cluster *clusterv1.ManagedCluster, sets []clusterv1beta2.ManagedClusterSet) string {
	name := cluster.Labels[clusterv1beta2.ClusterSetLabel]
	if name == "" {
		return ""
	}
	for i := range sets {
		if sets[i].Name == name && IsExclusive(&sets[i]) {
			return name
		}
	}
	return ""
}

// ExportersColumn names the exporting clusters of an import, each that
// the hub has lost marked "(unavailable)".
func ExportersColumn(is *mcsv1alpha1.ImportedService) []string {
	names := make([]string, 0, len(is.Spec.Clusters))
	for _, c := range is.Spec.Clusters {
		n := c.Name
		if !c.Available {
			n += "(unavailable)"
		}
		names = append(names, n)
	}
	return names
}
