package services

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

// What the import side writes into its cluster for one ImportedService,
// computed without reading the cluster: the ServiceImport, for a
// ClusterSetIP service the derived Service, and the EndpointSlices.

const (
	// maxSliceEndpoints is how many endpoints one imported EndpointSlice
	// holds at most, as the built-in EndpointSlice controller's default.
	maxSliceEndpoints = 100
	// appManagedByLabel marks the ServiceImports and derived Services the
	// agent writes.
	appManagedByLabel = "app.kubernetes.io/managed-by"
)

// serviceImportGVK is what owner references to a ServiceImport name.
var serviceImportGVK = mcsv1beta1.SchemeGroupVersion.WithKind(mcsv1beta1.ServiceImportKindName)

// importKey returns the key of imported service namespace/name in the
// import side's queue: the name of its ImportedService on the hub.
func importKey(namespace, name string) string { return mcs.ObjectName(namespace, name) }

// splitImportKey is importKey's inverse: neither a namespace nor a Service
// name holds a dot, so the first dot separates them.
func splitImportKey(key string) (namespace, name string, ok bool) {
	namespace, name, ok = strings.Cut(key, ".")
	return namespace, name, ok && namespace != "" && name != ""
}

// desiredServiceImport returns the ServiceImport of is in set, without
// owner-dependent fields: spec.ips and spec.ipFamilies come from the
// derived Service (ips, families), for ClusterSetIP imports only.
func desiredServiceImport(set string, is *mcsv1alpha1.ImportedService, ips []string, families []corev1.IPFamily) *mcsv1beta1.ServiceImport {
	s := &is.Spec
	labels := maps.Clone(s.ExportedLabels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[mcs.ClusterSetLabel] = set
	labels[appManagedByLabel] = mcs.ManagedBy
	annotations := maps.Clone(s.ExportedAnnotations)
	if s.Type != mcsv1alpha1.Headless {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[mcs.DerivedServiceAnnotation] = mcs.DerivedServiceName(s.Namespace, s.Name)
	}
	si := &mcsv1beta1.ServiceImport{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, Labels: labels, Annotations: annotations},
		Spec: mcsv1beta1.ServiceImportSpec{
			Type:                  mcsv1beta1.ServiceImportType(s.Type),
			SessionAffinity:       s.SessionAffinity,
			SessionAffinityConfig: s.SessionAffinityConfig.DeepCopy(),
			InternalTrafficPolicy: s.InternalTrafficPolicy,
			TrafficDistribution:   s.TrafficDistribution,
			IPFamilies:            slices.Clone(s.IPFamilies),
		},
	}
	if si.Spec.Type == "" {
		si.Spec.Type = mcsv1beta1.ClusterSetIP
	}
	si.Spec.Ports = []mcsv1beta1.ServicePort{}
	for _, p := range s.Ports {
		si.Spec.Ports = append(si.Spec.Ports, mcsv1beta1.ServicePort{Name: p.Name, Protocol: protocol(p.Protocol), AppProtocol: p.AppProtocol, Port: p.Port})
	}
	if si.Spec.Type == mcsv1beta1.ClusterSetIP {
		si.Spec.IPs = slices.Clone(ips)
		if len(families) > 0 {
			si.Spec.IPFamilies = slices.Clone(families)
		}
	}
	return si
}

// desiredStatus returns the status of a ServiceImport of is: every
// exporting cluster, and the Ready condition. ready, reason and message
// say whether the cluster-set IP is there (always for Headless).
func desiredStatus(is *mcsv1alpha1.ImportedService, ready metav1.ConditionStatus, reason mcsv1beta1.ServiceImportConditionReason, message string) mcsv1beta1.ServiceImportStatus {
	st := mcsv1beta1.ServiceImportStatus{EndpointSliceObjects: mcsv1beta1.EndpointSliceObjectsPresent}
	for _, c := range is.Spec.Clusters {
		st.Clusters = append(st.Clusters, mcsv1beta1.ClusterStatus{Cluster: c.Name})
	}
	slices.SortFunc(st.Clusters, func(a, b mcsv1beta1.ClusterStatus) int { return strings.Compare(a.Cluster, b.Cluster) })
	st.Conditions = []metav1.Condition{{
		Type: string(mcsv1beta1.ServiceImportConditionReady), Status: ready, Reason: string(reason), Message: message,
	}}
	return st
}

// desiredDerivedService returns the ClusterIP Service that holds the
// cluster-set IP of ClusterSetIP import is: the import's ports, no
// selector, owned by the ServiceImport owner.
func desiredDerivedService(set string, is *mcsv1alpha1.ImportedService, owner metav1.OwnerReference) *corev1.Service {
	s := &is.Spec
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: s.Namespace, Name: mcs.DerivedServiceName(s.Namespace, s.Name),
			Labels:          derivedServiceLabels(set, s.Name),
			OwnerReferences: []metav1.OwnerReference{owner},
		},
		Spec: corev1.ServiceSpec{
			Type:                  corev1.ServiceTypeClusterIP,
			SessionAffinity:       s.SessionAffinity,
			SessionAffinityConfig: s.SessionAffinityConfig.DeepCopy(),
			IPFamilies:            slices.Clone(s.IPFamilies),
		},
	}
	if svc.Spec.SessionAffinity == "" {
		svc.Spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	switch len(s.IPFamilies) {
	case 1:
		svc.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
	case 2:
		svc.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyPreferDualStack)
	}
	for _, p := range s.Ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
			Name: p.Name, Protocol: protocol(p.Protocol), AppProtocol: p.AppProtocol, Port: p.Port, TargetPort: intstr.FromInt32(p.Port),
		})
	}
	return svc
}

// derivedServiceLabels are the labels of the derived Service of service
// name imported from set: what marks it as the agent's.
func derivedServiceLabels(set, name string) map[string]string {
	return map[string]string{mcs.ClusterSetLabel: set, appManagedByLabel: mcs.ManagedBy, mcs.ServiceNameLabel: name}
}

// ownerRef is the owner reference of what belongs to ServiceImport si.
func ownerRef(si *mcsv1beta1.ServiceImport) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: serviceImportGVK.GroupVersion().String(), Kind: serviceImportGVK.Kind,
		Name: si.Name, UID: si.UID, Controller: ptr.To(false),
	}
}

// desiredSlices returns the EndpointSlices of import is in set, owned by
// owner: per available source cluster, address type and ports, at most
// maxSliceEndpoints endpoints each, endpoints in address order, named
// deterministically so that a restart finds the same names. The hub's
// groups of one address type and ports but different zones go into the
// same slices (each endpoint carries its zone), so the names and the
// split do not depend on the zones.
func desiredSlices(set string, is *mcsv1alpha1.ImportedService, owner metav1.OwnerReference) []*discoveryv1.EndpointSlice {
	s := &is.Spec
	var out []*discoveryv1.EndpointSlice
	for _, c := range s.Clusters {
		if !c.Available {
			continue
		}
		for _, run := range sliceRuns(c.Endpoints) {
			eps := run.eps
			slices.SortStableFunc(eps, func(a, b discoveryv1.Endpoint) int { return strings.Compare(a.Addresses[0], b.Addresses[0]) })
			for chunk := 0; chunk*maxSliceEndpoints < len(eps); chunk++ {
				part := eps[chunk*maxSliceEndpoints : min((chunk+1)*maxSliceEndpoints, len(eps))]
				out = append(out, &discoveryv1.EndpointSlice{
					ObjectMeta: metav1.ObjectMeta{
						Namespace: s.Namespace, Name: sliceName(s.Namespace, s.Name, c.Name, run.at, run.ports, chunk),
						Labels:          sliceLabels(set, is, c.Name),
						OwnerReferences: []metav1.OwnerReference{owner},
					},
					AddressType: run.at,
					Ports:       run.ports,
					Endpoints:   slices.Clone(part),
				})
			}
		}
	}
	return out
}

// sliceRun is the endpoints of one cluster of one address type and ports,
// whatever their zones: what one series of slices holds.
type sliceRun struct {
	at    discoveryv1.AddressType
	ports []discoveryv1.EndpointPort
	eps   []discoveryv1.Endpoint
}

// sliceRuns expands groups (mcs.Endpoints) into runs of one address type
// and ports, in the order the groups first name them; endpoints without
// an address are left out.
func sliceRuns(groups []mcsv1alpha1.EndpointGroup) []*sliceRun {
	var runs []*sliceRun
	byKey := map[string]*sliceRun{}
	for i := range groups {
		g := &groups[i]
		ports := slicePorts(g.Ports)
		key := string(g.AddressType) + "/" + portsKey(ports)
		r := byKey[key]
		if r == nil {
			r = &sliceRun{at: g.AddressType, ports: ports}
			byKey[key] = r
			runs = append(runs, r)
		}
		for _, e := range mcs.Endpoints(g) {
			if len(e.Addresses) > 0 {
				r.eps = append(r.eps, e)
			}
		}
	}
	return slices.DeleteFunc(runs, func(r *sliceRun) bool { return len(r.eps) == 0 })
}

// sliceLabels are the labels of the slices of cluster's endpoints of
// import is: what CoreDNS's multicluster support and kube-proxy select
// them by, and what marks them as the agent's.
func sliceLabels(set string, is *mcsv1alpha1.ImportedService, cluster string) map[string]string {
	l := map[string]string{
		mcsv1beta1.LabelServiceName:   is.Spec.Name,
		mcsv1beta1.LabelSourceCluster: cluster,
		discoveryv1.LabelManagedBy:    mcs.ManagedBy,
		mcs.ClusterSetLabel:           set,
	}
	if is.Spec.Type != mcsv1alpha1.Headless {
		l[discoveryv1.LabelServiceName] = mcs.DerivedServiceName(is.Spec.Namespace, is.Spec.Name)
	}
	return l
}

// slicePorts copies ports with the protocol defaulted, as the API server
// stores them, so that what was written compares equal to what is read.
func slicePorts(ports []discoveryv1.EndpointPort) []discoveryv1.EndpointPort {
	out := make([]discoveryv1.EndpointPort, 0, len(ports))
	for _, p := range ports {
		p := *p.DeepCopy()
		if p.Protocol == nil {
			p.Protocol = ptr.To(corev1.ProtocolTCP)
		}
		if p.Name == nil {
			p.Name = ptr.To("")
		}
		out = append(out, p)
	}
	return out
}

// sliceName names the chunk-th slice of cluster's endpoints of address
// type at and ports of service namespace/name: the service and cluster,
// readable, and a hash of everything that tells the slices apart.
func sliceName(namespace, name, cluster string, at discoveryv1.AddressType, ports []discoveryv1.EndpointPort, chunk int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s/%s/%s/%d", namespace, name, cluster, at, chunk)
	b.WriteString("/" + portsKey(ports))
	sum := sha256.Sum256([]byte(b.String()))
	h := strings.ToLower(base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:]))[:10]
	return name + "-" + cluster + "-" + h
}

// portsKey is ports in a form that does not depend on their order.
func portsKey(ports []discoveryv1.EndpointPort) string {
	keys := make([]string, 0, len(ports))
	for _, p := range ports {
		keys = append(keys, fmt.Sprintf("%s:%s:%d:%s", ptr.Deref(p.Name, ""), ptr.Deref(p.Protocol, corev1.ProtocolTCP), ptr.Deref(p.Port, 0), ptr.Deref(p.AppProtocol, "")))
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

// protocol is p, TCP when empty.
func protocol(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}
