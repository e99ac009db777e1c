package services

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// export builds cluster's export, created age seconds after t0.
func export(cluster string, age int, mutate ...func(*mcsv1alpha1.ExportedServiceSpec)) Export {
	spec := &mcsv1alpha1.ExportedServiceSpec{
		Namespace: "demo", Name: "web",
		ExportCreationTimestamp: metav1.NewTime(t0.Add(time.Duration(age) * time.Second)),
		ServiceProperties: mcsv1alpha1.ServiceProperties{
			Type:  mcsv1alpha1.ClusterSetIP,
			Ports: []mcsv1alpha1.ServicePort{{Name: "tcp", Protocol: corev1.ProtocolTCP, Port: 42}},
		},
		Endpoints: []mcsv1alpha1.EndpointGroup{{
			AddressType: discoveryv1.AddressTypeIPv4, Zone: "z1",
			Ready:     []string{"10.0.0.1"},
			Endpoints: []mcsv1alpha1.Endpoint{{Addresses: []string{"10.0.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}}},
		}},
	}
	for _, m := range mutate {
		m(spec)
	}
	return Export{Cluster: cluster, Available: true, Generation: 1, Spec: spec}
}

func ports(p ...mcsv1alpha1.ServicePort) func(*mcsv1alpha1.ExportedServiceSpec) {
	return func(s *mcsv1alpha1.ExportedServiceSpec) { s.Ports = p }
}

func port(name string, proto corev1.Protocol, n int32) mcsv1alpha1.ServicePort {
	return mcsv1alpha1.ServicePort{Name: name, Protocol: proto, Port: n}
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name    string
		exports []Export
		// wantPorts are the import's ports, in order.
		wantPorts []mcsv1alpha1.ServicePort
		wantType  mcsv1alpha1.ServiceType
		// wantReasons are the conflict reasons, comma-joined ("" for none).
		wantReasons string
		// wantMessage are parts the verdict's message must hold.
		wantMessage []string
		check       func(t *testing.T, m Merged)
	}{
		{
			name:        "one export",
			exports:     []Export{export("cluster-1", 0)},
			wantPorts:   []mcsv1alpha1.ServicePort{port("tcp", corev1.ProtocolTCP, 42)},
			wantType:    mcsv1alpha1.ClusterSetIP,
			wantMessage: []string{"the 1 export agree"},
		},
		{
			name:        "two exports that agree",
			exports:     []Export{export("cluster-2", 5), export("cluster-1", 0)},
			wantPorts:   []mcsv1alpha1.ServicePort{port("tcp", corev1.ProtocolTCP, 42)},
			wantType:    mcsv1alpha1.ClusterSetIP,
			wantMessage: []string{"the 2 exports agree"},
		},
		{
			// §6: A (older) tcp/42, B tcp/42 + stcp SCTP/142 → both ports, conflict on both.
			name: "a newer export adds a port: the union, PortConflict",
			exports: []Export{
				export("cluster-b", 10, ports(port("tcp", corev1.ProtocolTCP, 42), port("stcp", corev1.ProtocolSCTP, 142))),
				export("cluster-a", 0),
			},
			wantPorts:   []mcsv1alpha1.ServicePort{port("tcp", corev1.ProtocolTCP, 42), port("stcp", corev1.ProtocolSCTP, 142)},
			wantType:    mcsv1alpha1.ClusterSetIP,
			wantReasons: "PortConflict",
			wantMessage: []string{"PortConflict: ports [tcp TCP/42, stcp SCTP/142] are the union", "in cluster-a", "1 of 2 exports differ (cluster-a)"},
		},
		{
			// §9 item 7: a second exporter adding a differently named port.
			name: "a differently named port of a second exporter: the union",
			exports: []Export{
				export("cluster-a", 0, ports(port("tcp", corev1.ProtocolTCP, 42))),
				export("cluster-b", 1, ports(port("tcp2", corev1.ProtocolTCP, 4242))),
			},
			wantPorts:   []mcsv1alpha1.ServicePort{port("tcp", corev1.ProtocolTCP, 42), port("tcp2", corev1.ProtocolTCP, 4242)},
			wantType:    mcsv1alpha1.ClusterSetIP,
			wantReasons: "PortConflict",
			wantMessage: []string{"2 of 2 exports differ (cluster-a, cluster-b)"},
		},
		{
			// §6 and §9 item 8: same name, different number → only the oldest's port.
			name: "same port name, different number: the oldest's",
			exports: []Export{
				export("cluster-b", 10, ports(port("tcp", corev1.ProtocolTCP, 43))),
				export("cluster-a", 0, ports(port("tcp", corev1.ProtocolTCP, 42))),
			},
			wantPorts:   []mcsv1alpha1.ServicePort{port("tcp", corev1.ProtocolTCP, 42)},
			wantType:    mcsv1alpha1.ClusterSetIP,
			wantReasons: "PortConflict",
			wantMessage: []string{"dropped: cluster-b's tcp TCP/43 lost to cluster-a's tcp TCP/42"},
		},
		{
			name: "same protocol and port, different name: the oldest's",
			exports: []Export{
				export("cluster-a", 0, ports(port("http", corev1.ProtocolTCP, 80))),
				export("cluster-b", 10, ports(port("web", corev1.ProtocolTCP, 80))),
			},
			wantPorts:   []mcsv1alpha1.ServicePort{port("http", corev1.ProtocolTCP, 80)},
			wantType:    mcsv1alpha1.ClusterSetIP,
			wantReasons: "PortConflict",
			wantMessage: []string{"cluster-b's web TCP/80 lost to cluster-a's http TCP/80"},
		},
		{
			name: "an empty protocol is TCP",
			exports: []Export{
				export("cluster-a", 0, ports(port("tcp", "", 42))),
				export("cluster-b", 1, ports(port("tcp", corev1.ProtocolTCP, 42))),
			},
			wantPorts: []mcsv1alpha1.ServicePort{port("tcp", corev1.ProtocolTCP, 42)},
			wantType:  mcsv1alpha1.ClusterSetIP,
		},
		{
			// §6 and §9 item 11: older ClusterIP, newer headless → ClusterSetIP, conflict on both.
			name: "an older ClusterIP export and a newer headless one",
			exports: []Export{
				export("cluster-2", 30, func(s *mcsv1alpha1.ExportedServiceSpec) { s.Type = mcsv1alpha1.Headless }),
				export("cluster-1", 0),
			},
			wantPorts:   []mcsv1alpha1.ServicePort{port("tcp", corev1.ProtocolTCP, 42)},
			wantType:    mcsv1alpha1.ClusterSetIP,
			wantReasons: "TypeConflict",
			wantMessage: []string{"TypeConflict: type ClusterSetIP taken from the oldest export, in cluster-1; 1 of 2 exports disagree (cluster-2)"},
		},
		{
			// Removing the older export flips the type: expected.
			name: "the headless export alone",
			exports: []Export{
				export("cluster-2", 30, func(s *mcsv1alpha1.ExportedServiceSpec) { s.Type = mcsv1alpha1.Headless }),
			},
			wantPorts: []mcsv1alpha1.ServicePort{port("tcp", corev1.ProtocolTCP, 42)},
			wantType:  mcsv1alpha1.Headless,
		},
		{
			name: "same timestamp: the cluster name breaks the tie",
			exports: []Export{
				export("cluster-b", 0, func(s *mcsv1alpha1.ExportedServiceSpec) { s.Type = mcsv1alpha1.Headless }),
				export("cluster-a", 0),
			},
			wantPorts:   []mcsv1alpha1.ServicePort{port("tcp", corev1.ProtocolTCP, 42)},
			wantType:    mcsv1alpha1.ClusterSetIP,
			wantReasons: "TypeConflict",
			wantMessage: []string{"in cluster-a"},
		},
		{
			// §6 and §9 item 12: different exported labels and annotations → the oldest's maps.
			name: "different exported labels and annotations: the oldest's",
			exports: []Export{
				export("cluster-a", 0, func(s *mcsv1alpha1.ExportedServiceSpec) {
					s.ExportedLabels = map[string]string{"tier": "web"}
					s.ExportedAnnotations = map[string]string{"owner": "team-a"}
				}),
				export("cluster-b", 1, func(s *mcsv1alpha1.ExportedServiceSpec) {
					s.ExportedLabels = map[string]string{"tier": "web", "extra": "b"}
					s.ExportedAnnotations = map[string]string{"owner": "team-b"}
				}),
			},
			wantPorts:   []mcsv1alpha1.ServicePort{port("tcp", corev1.ProtocolTCP, 42)},
			wantType:    mcsv1alpha1.ClusterSetIP,
			wantReasons: "AnnotationsConflict,LabelsConflict",
			wantMessage: []string{"exportedLabels {tier=web} taken from the oldest export, in cluster-a", "exportedAnnotations {owner=team-a}"},
			check: func(t *testing.T, m Merged) {
				if l := m.Spec.ExportedLabels; len(l) != 1 || l["tier"] != "web" {
					t.Errorf("exportedLabels = %v, want only the oldest's", l)
				}
				if a := m.Spec.ExportedAnnotations; len(a) != 1 || a["owner"] != "team-a" {
					t.Errorf("exportedAnnotations = %v, want only the oldest's", a)
				}
			},
		},
		{
			// §9 item 4: the properties are the exported Service's.
			name: "session affinity, its config, traffic policy and distribution: the oldest's",
			exports: []Export{
				export("cluster-a", 0, func(s *mcsv1alpha1.ExportedServiceSpec) {
					s.SessionAffinity = corev1.ServiceAffinityClientIP
					s.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](300)}}
					s.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyLocal)
					s.TrafficDistribution = ptr.To("PreferClose")
				}),
				export("cluster-b", 1),
			},
			wantPorts:   []mcsv1alpha1.ServicePort{port("tcp", corev1.ProtocolTCP, 42)},
			wantType:    mcsv1alpha1.ClusterSetIP,
			wantReasons: "SessionAffinityConflict,SessionAffinityConfigConflict,InternalTrafficPolicyConflict,TrafficDistributionConflict",
			wantMessage: []string{"sessionAffinity ClientIP taken from the oldest export, in cluster-a", "sessionAffinityConfig clientIP.timeoutSeconds=300",
				"internalTrafficPolicy Local", "trafficDistribution PreferClose"},
			check: func(t *testing.T, m Merged) {
				if m.Spec.SessionAffinity != corev1.ServiceAffinityClientIP || m.Spec.SessionAffinityConfig == nil ||
					*m.Spec.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyLocal || *m.Spec.TrafficDistribution != "PreferClose" {
					t.Errorf("properties = %+v, want the oldest's", m.Spec.ServiceProperties)
				}
			},
		},
		{
			name: "unset affinity and traffic policy equal their defaults",
			exports: []Export{
				export("cluster-a", 0),
				export("cluster-b", 1, func(s *mcsv1alpha1.ExportedServiceSpec) {
					s.SessionAffinity = corev1.ServiceAffinityNone
					s.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
				}),
			},
			wantPorts: []mcsv1alpha1.ServicePort{port("tcp", corev1.ProtocolTCP, 42)},
			wantType:  mcsv1alpha1.ClusterSetIP,
		},
		{
			name: "IP families differ: the oldest's, IPFamilyConflict",
			exports: []Export{
				export("cluster-a", 0, func(s *mcsv1alpha1.ExportedServiceSpec) { s.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol} }),
				export("cluster-b", 1, func(s *mcsv1alpha1.ExportedServiceSpec) {
					s.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
				}),
			},
			wantPorts:   []mcsv1alpha1.ServicePort{port("tcp", corev1.ProtocolTCP, 42)},
			wantType:    mcsv1alpha1.ClusterSetIP,
			wantReasons: "IPFamilyConflict",
			wantMessage: []string{"ipFamilies [IPv4] taken from the oldest export, in cluster-a"},
		},
		{
			name: "several conflicts at once, in the KEP's order",
			exports: []Export{
				export("cluster-b", 1, ports(port("tcp", corev1.ProtocolTCP, 43)), func(s *mcsv1alpha1.ExportedServiceSpec) { s.Type = mcsv1alpha1.Headless }),
				export("cluster-a", 0),
			},
			wantPorts:   []mcsv1alpha1.ServicePort{port("tcp", corev1.ProtocolTCP, 42)},
			wantType:    mcsv1alpha1.ClusterSetIP,
			wantReasons: "PortConflict,TypeConflict",
			wantMessage: []string{"PortConflict: ", "; TypeConflict: type ClusterSetIP"},
		},
		{
			name: "clusters sorted by name, an unavailable one listed without endpoints",
			exports: []Export{
				export("cluster-c", 2),
				func() Export { e := export("cluster-a", 0); e.Available = false; e.Generation = 7; return e }(),
				export("cluster-b", 1),
			},
			wantPorts: []mcsv1alpha1.ServicePort{port("tcp", corev1.ProtocolTCP, 42)},
			wantType:  mcsv1alpha1.ClusterSetIP,
			check: func(t *testing.T, m Merged) {
				var names []string
				for _, c := range m.Spec.Clusters {
					names = append(names, c.Name)
				}
				if strings.Join(names, ",") != "cluster-a,cluster-b,cluster-c" {
					t.Fatalf("clusters = %v, want sorted by name", names)
				}
				a := m.Spec.Clusters[0]
				if a.Available || len(a.Endpoints) != 0 || a.Generation != 7 {
					t.Errorf("unavailable cluster = %+v, want available=false, no endpoints, generation 7", a)
				}
				if b := m.Spec.Clusters[1]; !b.Available || b.Generation != 1 || !equality.Semantic.DeepEqual(b.Endpoints, export("cluster-b", 1).Spec.Endpoints) {
					t.Errorf("available cluster = %+v, want its endpoints as it exports them (zone, ready list and the others)", b)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Merge(tt.exports)
			if len(m.Spec.Ports) != len(tt.wantPorts) {
				t.Fatalf("ports = %+v, want %+v", m.Spec.Ports, tt.wantPorts)
			}
			for i := range tt.wantPorts {
				if !samePort(m.Spec.Ports[i], tt.wantPorts[i]) || m.Spec.Ports[i].Protocol != tt.wantPorts[i].Protocol {
					t.Errorf("ports[%d] = %+v, want %+v", i, m.Spec.Ports[i], tt.wantPorts[i])
				}
			}
			if m.Spec.Type != tt.wantType {
				t.Errorf("type = %s, want %s", m.Spec.Type, tt.wantType)
			}
			if got := strings.Join(m.Verdict.Reasons, ","); got != tt.wantReasons {
				t.Errorf("reasons = %q, want %q (message %q)", got, tt.wantReasons, m.Verdict.Message)
			}
			for _, part := range tt.wantMessage {
				if !strings.Contains(m.Verdict.Message, part) {
					t.Errorf("message %q does not hold %q", m.Verdict.Message, part)
				}
			}
			cond := conflictCondition(m.Verdict)
			wantStatus := metav1.ConditionFalse
			if tt.wantReasons != "" {
				wantStatus = metav1.ConditionTrue
			}
			if cond.Status != wantStatus || (tt.wantReasons == "" && cond.Reason != "NoConflicts") || (tt.wantReasons != "" && cond.Reason != tt.wantReasons) {
				t.Errorf("Conflict condition = %s/%s, want %s", cond.Status, cond.Reason, wantStatus)
			}
			if tt.check != nil {
				tt.check(t, m)
			}
		})
	}
}

// TestMergeKeepsInputs checks that the merge copies what it takes: the
// import is written from the cache's objects, which must stay untouched.
func TestMergeKeepsInputs(t *testing.T) {
	a := export("cluster-a", 0, ports(port("tcp", "", 42)), func(s *mcsv1alpha1.ExportedServiceSpec) {
		s.ExportedLabels = map[string]string{"k": "v"}
	})
	m := Merge([]Export{a})
	m.Spec.Ports[0].Name = "changed"
	m.Spec.ExportedLabels["k"] = "changed"
	if a.Spec.Ports[0].Name != "tcp" || a.Spec.Ports[0].Protocol != "" || a.Spec.ExportedLabels["k"] != "v" {
		t.Errorf("the merge changed its input: %+v", a.Spec)
	}
}

// TestMergeIsStable checks that the verdict does not depend on the order
// of the exports nor on their endpoints: an endpoint change rewrites no
// ExportedService status.
func TestMergeIsStable(t *testing.T) {
	a := export("cluster-a", 0)
	b := export("cluster-b", 1, ports(port("tcp", corev1.ProtocolTCP, 43)))
	one := Merge([]Export{a, b})
	b.Spec.Endpoints = nil
	a.Generation = 2
	two := Merge([]Export{b, a})
	if one.Verdict.Message != two.Verdict.Message || strings.Join(one.Verdict.Reasons, ",") != strings.Join(two.Verdict.Reasons, ",") {
		t.Errorf("verdicts differ: %+v and %+v", one.Verdict, two.Verdict)
	}
}

func TestQuietConflicts(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "mcs.flotilla.io", Resource: "importedservices"}, "demo.web", errors.New("changed"))
	other := errors.New("boom")
	for _, tt := range []struct {
		name      string
		err       error
		wantErr   bool
		wantRetry bool
	}{
		{name: "none"},
		{name: "one conflict", err: fmt.Errorf("update: %w", conflict), wantRetry: true},
		{name: "conflicts only", err: errors.Join(conflict, fmt.Errorf("patch: %w", conflict)), wantRetry: true},
		{name: "a conflict and another error", err: errors.Join(conflict, other), wantErr: true},
		{name: "another error", err: other, wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := quietConflicts(tt.err)
			if (err != nil) != tt.wantErr || (res.RequeueAfter > 0) != tt.wantRetry {
				t.Errorf("quietConflicts(%v) = %v, %v; want error %t, retry %t", tt.err, res, err, tt.wantErr, tt.wantRetry)
			}
		})
	}
}
