package services

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
)

// Export is one member cluster's export of a service, as the merge sees it.
type Export struct {
	// Cluster is the exporting cluster, the namespace of its ExportedService.
	Cluster string
	// Available is false while the cluster's ManagedClusterConditionAvailable
	// is not True: it stays listed, without endpoints.
	Available bool
	// Generation is the ExportedService's metadata.generation.
	Generation int64
	// Spec is the ExportedService's spec.
	Spec *mcsv1alpha1.ExportedServiceSpec
}

// Verdict is the merge's verdict on every export of a service: the KEP
// raises a conflict on every export, so all share it.
type Verdict struct {
	// Reasons are the KEP's conflict reasons, in the KEP's order; none
	// means that the exports agree.
	Reasons []string
	// Message names, for each conflicting field, what the import has,
	// which cluster it came from and why.
	Message string
}

// Merged is the merge of a set's exports of one service.
type Merged struct {
	// Spec is the ImportedService's spec (without clusterSet, namespace and name).
	Spec mcsv1alpha1.ImportedServiceSpec
	// Verdict is the conflict verdict on every export.
	Verdict Verdict
}

// Merge merges the exports of one service in one cluster set by the
// KEP-1645 rules: the ports are the union, merged by name first, then by
// protocol and port, the oldest export's port winning where two differ;
// every other property is the oldest export's (by exportCreationTimestamp,
// ties broken by cluster name). Any difference is a conflict, reported on
// every export. exports must hold at least one export; they need not be
// sorted.
func Merge(exports []Export) Merged {
	sorted := slices.Clone(exports)
	slices.SortFunc(sorted, func(a, b Export) int {
		if c := a.Spec.ExportCreationTimestamp.Compare(b.Spec.ExportCreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Cluster, b.Cluster)
	})
	oldest := sorted[0]
	var m Merged
	props := &m.Spec.ServiceProperties
	o := &oldest.Spec.ServiceProperties
	props.Type = o.Type
	props.SessionAffinity = o.SessionAffinity
	props.SessionAffinityConfig = o.SessionAffinityConfig.DeepCopy()
	props.InternalTrafficPolicy = copyPtr(o.InternalTrafficPolicy)
	props.TrafficDistribution = copyPtr(o.TrafficDistribution)
	props.IPFamilies = slices.Clone(o.IPFamilies)
	props.ExportedLabels = maps.Clone(o.ExportedLabels)
	props.ExportedAnnotations = maps.Clone(o.ExportedAnnotations)

	var ports portMerge
	for _, e := range sorted {
		ports.add(e)
	}
	props.Ports = ports.merged

	var clauses []string
	var reasons []string
	if ports.conflict(sorted) {
		reasons = append(reasons, string(mcsv1beta1.ServiceExportReasonPortConflict))
		clauses = append(clauses, ports.message(sorted))
	}
	for _, f := range propertyFields() {
		if c := f.check(sorted); c != "" {
			reasons = append(reasons, f.reason)
			clauses = append(clauses, f.reason+": "+c)
		}
	}
	m.Verdict = Verdict{Reasons: reasons, Message: strings.Join(clauses, "; ")}
	if len(reasons) == 0 {
		m.Verdict.Message = fmt.Sprintf("the %s agree", exportCount(len(sorted)))
	}

	for _, e := range exports {
		c := mcsv1alpha1.ImportedCluster{Name: e.Cluster, Generation: e.Generation, Available: e.Available}
		if e.Available {
			c.Endpoints = e.Spec.Endpoints
		}
		m.Spec.Clusters = append(m.Spec.Clusters, c)
	}
	slices.SortFunc(m.Spec.Clusters, func(a, b mcsv1alpha1.ImportedCluster) int { return strings.Compare(a.Name, b.Name) })
	return m
}

// propertyField is a property other than the ports that every export must
// agree on.
type propertyField struct {
	reason string
	// name is how messages name the field.
	name string
	// same compares two exports' values; show prints one.
	same func(a, b *mcsv1alpha1.ServiceProperties) bool
	show func(p *mcsv1alpha1.ServiceProperties) string
}

// propertyFields are the properties taken whole from the oldest export,
// in the KEP's order of reasons.
func propertyFields() []propertyField {
	return []propertyField{
		{
			reason: string(mcsv1beta1.ServiceExportReasonTypeConflict), name: "type",
			same: func(a, b *mcsv1alpha1.ServiceProperties) bool { return a.Type == b.Type },
			show: func(p *mcsv1alpha1.ServiceProperties) string { return string(p.Type) },
		},
		{
			reason: string(mcsv1beta1.ServiceExportReasonSessionAffinityConflict), name: "sessionAffinity",
			same: func(a, b *mcsv1alpha1.ServiceProperties) bool { return affinity(a) == affinity(b) },
			show: func(p *mcsv1alpha1.ServiceProperties) string { return string(affinity(p)) },
		},
		{
			reason: string(mcsv1beta1.ServiceExportReasonSessionAffinityConfigConflict), name: "sessionAffinityConfig",
			same: func(a, b *mcsv1alpha1.ServiceProperties) bool {
				return equality.Semantic.DeepEqual(a.SessionAffinityConfig, b.SessionAffinityConfig)
			},
			show: func(p *mcsv1alpha1.ServiceProperties) string {
				c := p.SessionAffinityConfig
				if c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
					return "none"
				}
				return fmt.Sprintf("clientIP.timeoutSeconds=%d", *c.ClientIP.TimeoutSeconds)
			},
		},
		{
			reason: string(mcsv1beta1.ServiceExportReasonAnnotationsConflict), name: "exportedAnnotations",
			same: func(a, b *mcsv1alpha1.ServiceProperties) bool {
				return maps.Equal(a.ExportedAnnotations, b.ExportedAnnotations)
			},
			show: func(p *mcsv1alpha1.ServiceProperties) string { return showMap(p.ExportedAnnotations) },
		},
		{
			reason: string(mcsv1beta1.ServiceExportReasonLabelsConflict), name: "exportedLabels",
			same: func(a, b *mcsv1alpha1.ServiceProperties) bool { return maps.Equal(a.ExportedLabels, b.ExportedLabels) },
			show: func(p *mcsv1alpha1.ServiceProperties) string { return showMap(p.ExportedLabels) },
		},
		{
			reason: string(mcsv1beta1.ServiceExportReasonInternalTrafficPolicyConflict), name: "internalTrafficPolicy",
			same: func(a, b *mcsv1alpha1.ServiceProperties) bool { return trafficPolicy(a) == trafficPolicy(b) },
			show: func(p *mcsv1alpha1.ServiceProperties) string { return string(trafficPolicy(p)) },
		},
		{
			reason: string(mcsv1beta1.ServiceExportReasonTrafficDistributionConflict), name: "trafficDistribution",
			same: func(a, b *mcsv1alpha1.ServiceProperties) bool {
				return deref(a.TrafficDistribution, "") == deref(b.TrafficDistribution, "")
			},
			show: func(p *mcsv1alpha1.ServiceProperties) string { return deref(p.TrafficDistribution, "none") },
		},
		{
			reason: string(mcsv1beta1.ServiceExportReasonIPFamilyConflict), name: "ipFamilies",
			same: func(a, b *mcsv1alpha1.ServiceProperties) bool { return slices.Equal(a.IPFamilies, b.IPFamilies) },
			show: func(p *mcsv1alpha1.ServiceProperties) string {
				if len(p.IPFamilies) == 0 {
					return "[]"
				}
				fams := make([]string, len(p.IPFamilies))
				for i, f := range p.IPFamilies {
					fams[i] = string(f)
				}
				return "[" + strings.Join(fams, ",") + "]"
			},
		},
	}
}

// check returns the clause of the message for f, or "" when every export
// agrees with the oldest, sorted[0].
func (f propertyField) check(sorted []Export) string {
	oldest := &sorted[0].Spec.ServiceProperties
	var differ []string
	for _, e := range sorted[1:] {
		if !f.same(oldest, &e.Spec.ServiceProperties) {
			differ = append(differ, e.Cluster)
		}
	}
	if len(differ) == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s taken from the oldest export, in %s; %d of %s disagree (%s)",
		f.name, f.show(oldest), sorted[0].Cluster, len(differ), exportCount(len(sorted)), strings.Join(differ, ", "))
}

// portMerge collects the union of the exports' ports.
type portMerge struct {
	merged []mcsv1alpha1.ServicePort
	// from is the cluster each merged port came from.
	from []string
	// dropped describes each port that lost to an older one.
	dropped []string
}

// add merges e's ports into the union: a port whose name, or else
// protocol and port, is already taken by an older export's different
// port is dropped.
func (p *portMerge) add(e Export) {
	for _, port := range e.Spec.Ports {
		port.Protocol = protocol(port)
		i := slices.IndexFunc(p.merged, func(q mcsv1alpha1.ServicePort) bool { return q.Name == port.Name })
		if i < 0 {
			i = slices.IndexFunc(p.merged, func(q mcsv1alpha1.ServicePort) bool { return q.Protocol == port.Protocol && q.Port == port.Port })
		}
		if i < 0 {
			port.AppProtocol = copyPtr(port.AppProtocol)
			p.merged = append(p.merged, port)
			p.from = append(p.from, e.Cluster)
			continue
		}
		if !samePort(p.merged[i], port) {
			p.dropped = append(p.dropped, fmt.Sprintf("%s's %s lost to %s's %s", e.Cluster, showPort(port), p.from[i], showPort(p.merged[i])))
		}
	}
}

// conflict says whether the exports' ports differ at all: a port some
// export lacks is a conflict even where the union holds it (KEP-1645).
func (p *portMerge) conflict(sorted []Export) bool {
	for _, e := range sorted {
		if !sameSet(e.Spec.Ports, p.merged) {
			return true
		}
	}
	return false
}

// message is the PortConflict clause.
func (p *portMerge) message(sorted []Export) string {
	var differ []string
	for _, e := range sorted {
		if !sameSet(e.Spec.Ports, p.merged) {
			differ = append(differ, e.Cluster)
		}
	}
	shown := make([]string, len(p.merged))
	for i, q := range p.merged {
		shown[i] = showPort(q)
	}
	msg := fmt.Sprintf("PortConflict: ports %s are the union of the exports' ports, the oldest export's (in %s) kept where two share a name or protocol and port; %d of %s differ (%s)",
		"["+strings.Join(shown, ", ")+"]", sorted[0].Cluster, len(differ), exportCount(len(sorted)), strings.Join(differ, ", "))
	if len(p.dropped) > 0 {
		msg += "; dropped: " + strings.Join(p.dropped, ", ")
	}
	return msg
}

// sameSet says whether ports holds exactly the merged ports.
func sameSet(ports, merged []mcsv1alpha1.ServicePort) bool {
	if len(ports) != len(merged) {
		return false
	}
	for _, port := range ports {
		port.Protocol = protocol(port)
		if !slices.ContainsFunc(merged, func(q mcsv1alpha1.ServicePort) bool { return samePort(q, port) }) {
			return false
		}
	}
	return true
}

func samePort(a, b mcsv1alpha1.ServicePort) bool {
	return a.Name == b.Name && protocol(a) == protocol(b) && a.Port == b.Port && deref(a.AppProtocol, "") == deref(b.AppProtocol, "")
}

func showPort(p mcsv1alpha1.ServicePort) string {
	s := fmt.Sprintf("%s/%d", protocol(p), p.Port)
	if p.Name != "" {
		s = p.Name + " " + s
	}
	if p.AppProtocol != nil {
		s += " (" + *p.AppProtocol + ")"
	}
	return s
}

func protocol(p mcsv1alpha1.ServicePort) corev1.Protocol {
	if p.Protocol == "" {
		return corev1.ProtocolTCP
	}
	return p.Protocol
}

func affinity(p *mcsv1alpha1.ServiceProperties) corev1.ServiceAffinity {
	if p.SessionAffinity == "" {
		return corev1.ServiceAffinityNone
	}
	return p.SessionAffinity
}

func trafficPolicy(p *mcsv1alpha1.ServiceProperties) corev1.ServiceInternalTrafficPolicy {
	return deref(p.InternalTrafficPolicy, corev1.ServiceInternalTrafficPolicyCluster)
}

func showMap(m map[string]string) string {
	if len(m) == 0 {
		return "{}"
	}
	keys := slices.Sorted(maps.Keys(m))
	for i, k := range keys {
		keys[i] = k + "=" + m[k]
	}
	return "{" + strings.Join(keys, ",") + "}"
}

func exportCount(n int) string {
	if n == 1 {
		return "1 export"
	}
	return fmt.Sprintf("%d exports", n)
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// conflictCondition is the Conflict condition of every export with v.
func conflictCondition(v Verdict) metav1.Condition {
	if len(v.Reasons) == 0 {
		return metav1.Condition{
			Type: mcsv1alpha1.ConditionConflict, Status: metav1.ConditionFalse,
			Reason: string(mcsv1beta1.ServiceExportReasonNoConflicts), Message: v.Message,
		}
	}
	return metav1.Condition{
		Type: mcsv1alpha1.ConditionConflict, Status: metav1.ConditionTrue,
		Reason: strings.Join(v.Reasons, ","), Message: v.Message,
	}
}
