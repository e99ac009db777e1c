package inventory

import (
	"encoding/json"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/api/multicluster/v1alpha1"
)

func TestDesiredStatus(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}
	mc.Status.Version.Kubernetes = "v1.36.0"
	mc.Status.Conditions = []metav1.Condition{{
		Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable", Message: "ok", LastTransitionTime: metav1.NewTime(t0),
	}}
	mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "clusterset.k8s.io", Value: "east"}, {Name: "empty", Value: ""}}
	hub := &HubAccess{Server: "https://hub.example:6443/", CAData: []byte("CA")}

	st, err := desiredStatus(mc, multiclusterv1alpha1.ClusterProfileStatus{}, 3, hub, t0.Add(time.Hour), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	healthy := meta.FindStatusCondition(st.Conditions, multiclusterv1alpha1.ConditionControlPlaneHealthy)
	if healthy == nil || healthy.Status != metav1.ConditionTrue || healthy.Reason != "ManagedClusterAvailable" || !healthy.LastTransitionTime.Time.Equal(t0) || healthy.ObservedGeneration != 3 {
		t.Errorf("ControlPlaneHealthy: %+v", healthy)
	}
	joined := meta.FindStatusCondition(st.Conditions, multiclusterv1alpha1.ConditionJoined)
	if joined == nil || joined.Status != metav1.ConditionUnknown || joined.Reason != reasonNotReported {
		t.Errorf("Joined without the cluster's condition: %+v", joined)
	}
	if st.Version.Kubernetes != "v1.36.0" {
		t.Errorf("version %q", st.Version.Kubernetes)
	}
	if len(st.Properties) != 1 || st.Properties[0].Name != "clusterset.k8s.io" || st.Properties[0].Value != "east" {
		t.Errorf("properties %+v: want the non-empty claim only", st.Properties)
	}
	if len(st.AccessProviders) != 1 {
		t.Fatalf("access providers %+v", st.AccessProviders)
	}
	ap := st.AccessProviders[0]
	if ap.Name != "flotilla" || ap.Cluster.Server != "https://hub.example:6443/apis/proxy.flotilla.io/v1/clusters/c1/proxy" || string(ap.Cluster.CertificateAuthorityData) != "CA" {
		t.Errorf("access provider %+v", ap)
	}
	if len(ap.Cluster.Extensions) != 1 || ap.Cluster.Extensions[0].Name != multiclusterv1alpha1.ExecExtensionName {
		t.Fatalf("extensions %+v", ap.Cluster.Extensions)
	}
	var cfg ExecConfig
	if err := json.Unmarshal(ap.Cluster.Extensions[0].Extension.Raw, &cfg); err != nil || cfg.ClusterName != "c1" || cfg.Hub != hub.Server {
		t.Errorf("exec config %s: %v", ap.Cluster.Extensions[0].Extension.Raw, err)
	}

	// The next round, with no renewal of the lease since, keeps the times
	// of what did not change.
	later := t0.Add(2 * time.Hour)
	again, err := desiredStatus(mc, st, 3, hub, later, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !again.Properties[0].LastObservedTime.Time.Equal(st.Properties[0].LastObservedTime.Time) {
		t.Errorf("an unchanged property's lastObservedTime moved: %v -> %v", st.Properties[0].LastObservedTime, again.Properties[0].LastObservedTime)
	}
	if j := meta.FindStatusCondition(again.Conditions, multiclusterv1alpha1.ConditionJoined); !j.LastTransitionTime.Time.Equal(joined.LastTransitionTime.Time) {
		t.Errorf("an unchanged Unknown condition's time moved")
	}
	mc.Status.ClusterClaims[0].Value = "west"
	changed, _ := desiredStatus(mc, st, 3, nil, later, time.Time{})
	if !changed.Properties[0].LastObservedTime.Time.Equal(later) {
		t.Errorf("a changed property keeps its old lastObservedTime")
	}
	if len(changed.AccessProviders) != 0 {
		t.Errorf("access provider without a known hub address: %+v", changed.AccessProviders)
	}
}

func TestLastObservedTimeFollowsTheLease(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}
	mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "clusterset.k8s.io", Value: "east"}}
	first, err := desiredStatus(mc, multiclusterv1alpha1.ClusterProfileStatus{}, 1, nil, t0, t0)
	if err != nil {
		t.Fatal(err)
	}
	observed := func(st multiclusterv1alpha1.ClusterProfileStatus) time.Time {
		return st.Properties[0].LastObservedTime.Time
	}
	if !observed(first).Equal(t0) {
		t.Fatalf("a new property observed at %v, want now %v", observed(first), t0)
	}
	for _, tc := range []struct {
		name         string
		now, renewed time.Time
		want         time.Time
	}{
		{"renewed since, but sooner than ObservedRefresh: no write for it", t0.Add(4 * time.Minute), t0.Add(4 * time.Minute), t0},
		{"renewed ObservedRefresh later: observed at the renewal", t0.Add(6 * time.Minute), t0.Add(5*time.Minute + 30*time.Second + 500*time.Millisecond), t0.Add(5*time.Minute + 30*time.Second)},
		{"the agent stopped renewing: the time stays, and goes stale", t0.Add(time.Hour), t0.Add(time.Minute), t0},
		{"no lease", t0.Add(time.Hour), time.Time{}, t0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := desiredStatus(mc, first, 1, nil, tc.now, tc.renewed)
			if err != nil {
				t.Fatal(err)
			}
			if !observed(got).Equal(tc.want) {
				t.Errorf("lastObservedTime %v, want %v", observed(got), tc.want)
			}
		})
	}

	if got := refreshAfter(first, t0.Add(time.Minute)); got != ObservedRefresh-time.Minute {
		t.Errorf("refresh due in %v, want %v", got, ObservedRefresh-time.Minute)
	}
	if got := refreshAfter(first, t0.Add(time.Hour)); got != minRefreshCheck {
		t.Errorf("refresh overdue: check again in %v, want %v", got, minRefreshCheck)
	}
	if got := refreshAfter(multiclusterv1alpha1.ClusterProfileStatus{}, t0); got != 0 {
		t.Errorf("no properties: refresh in %v, want never", got)
	}
}
