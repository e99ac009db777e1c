package inventory

import (
	"encoding/json"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/api/multicluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/tunnel"
)

// HubAccess is where consumers reach the hub: the address and CA that
// kube-public/cluster-info publishes to agents.
type HubAccess struct {
	// Server is the hub API server's URL, https://host:port.
	Server string
	// CAData is the PEM bundle that the hub's serving certificate chains to.
	CAData []byte
}

// ExecConfig is the content of the client.authentication.k8s.io/exec
// extension of the flotilla access provider: what `flotilla
// credential-plugin` receives as spec.cluster.config.
type ExecConfig struct {
	// ClusterName is the managed cluster the access is for.
	ClusterName string `json:"clusterName"`
	// Hub is the hub API server's URL: the consumer's credential is a
	// credential of this hub.
	Hub string `json:"hub"`
}

// accessProvider is the flotilla access provider of cluster c: c's door
// in the hub's cluster proxy, with the hub's CA, and the exec plugin's
// configuration.
func accessProvider(hub HubAccess, c string) (multiclusterv1alpha1.AccessProvider, error) {
	raw, err := json.Marshal(ExecConfig{ClusterName: c, Hub: hub.Server})
	if err != nil {
		return multiclusterv1alpha1.AccessProvider{}, err
	}
	return multiclusterv1alpha1.AccessProvider{
		Name: AccessProviderName,
		Cluster: multiclusterv1alpha1.Cluster{
			Server:                   strings.TrimSuffix(hub.Server, "/") + tunnel.ProxyPath(c),
			CertificateAuthorityData: hub.CAData,
			Extensions: []multiclusterv1alpha1.NamedExtension{{
				Name:      multiclusterv1alpha1.ExecExtensionName,
				Extension: runtime.RawExtension{Raw: raw},
			}},
		},
	}, nil
}

// profileLabels are the labels of every profile of cluster c.
func profileLabels(c string) map[string]string {
	return map[string]string{
		multiclusterv1alpha1.ClusterManagerLabel: ClusterManagerName,
		ClusterNameLabel:                         c,
	}
}

// ObservedRefresh is how stale a property's lastObservedTime may grow, on
// top of one lease period, while the cluster's agent reports: the hub
// moves it forward when the cluster's lease was renewed this much later.
// Moving it at every renewal would rewrite every profile every lease
// period (a thousand clusters, 60 s leases: 17 writes a second per
// inventory namespace) to say what the lease already says; this way it
// costs one status write per profile per ObservedRefresh.
const ObservedRefresh = 5 * time.Minute

// desiredStatus is the status of a profile of mc, given its current
// status (for the times it keeps) and its generation. hub is nil when the
// hub's address is not known yet: the profile then has no access provider.
// renewed is when the cluster's agent last renewed its lease, zero when
// unknown: the agent reads the cluster's claims every lease period, so a
// renewal is an observation of the claims it reported.
func desiredStatus(mc *clusterv1.ManagedCluster, cur multiclusterv1alpha1.ClusterProfileStatus, generation int64, hub *HubAccess, now, renewed time.Time) (multiclusterv1alpha1.ClusterProfileStatus, error) {
	st := multiclusterv1alpha1.ClusterProfileStatus{
		Version: multiclusterv1alpha1.ClusterVersion{Kubernetes: mc.Status.Version.Kubernetes},
	}
	// The conditions keep the cluster's own transition times: they say
	// when the cluster changed, not when the profile was written.
	for _, c := range []struct{ profile, cluster string }{
		{multiclusterv1alpha1.ConditionControlPlaneHealthy, clusterv1.ManagedClusterConditionAvailable},
		{multiclusterv1alpha1.ConditionJoined, clusterv1.ManagedClusterConditionJoined},
	} {
		cond := metav1.Condition{Type: c.profile, Status: metav1.ConditionUnknown, Reason: reasonNotReported,
			Message: "The cluster has not reported " + c.cluster + " yet", ObservedGeneration: generation}
		if from := meta.FindStatusCondition(mc.Status.Conditions, c.cluster); from != nil {
			cond.Status, cond.Reason, cond.Message, cond.LastTransitionTime = from.Status, from.Reason, from.Message, from.LastTransitionTime
		}
		if cond.Reason == "" {
			cond.Reason = reasonNotReported
		}
		if cond.LastTransitionTime.IsZero() {
			if old := meta.FindStatusCondition(cur.Conditions, c.profile); old != nil && old.Status == cond.Status {
				cond.LastTransitionTime = old.LastTransitionTime
			} else {
				cond.LastTransitionTime = metav1.NewTime(now)
			}
		}
		st.Conditions = append(st.Conditions, cond)
	}
	// Properties: the cluster claims, among them the About API's
	// ClusterProperties, which the agent reports as claims. A new or
	// changed value is observed now; an unchanged one keeps its
	// lastObservedTime until the lease shows a renewal ObservedRefresh
	// later, and then takes the renewal's time.
	observed := map[string]multiclusterv1alpha1.Property{}
	for _, p := range cur.Properties {
		observed[p.Name] = p
	}
	seen := map[string]bool{}
	for _, claim := range mc.Status.ClusterClaims {
		if claim.Name == "" || claim.Value == "" || len(claim.Name) > 253 || len(claim.Value) > 1024 || seen[claim.Name] {
			continue
		}
		seen[claim.Name] = true
		p := multiclusterv1alpha1.Property{Name: claim.Name, Value: claim.Value, LastObservedTime: metav1.NewTime(now)}
		if old, ok := observed[claim.Name]; ok && old.Value == claim.Value && !old.LastObservedTime.IsZero() {
			p.LastObservedTime = old.LastObservedTime
			if at := renewed.Truncate(time.Second); !at.After(now) && !at.Before(old.LastObservedTime.Add(ObservedRefresh)) {
				p.LastObservedTime = metav1.NewTime(at)
			}
		}
		st.Properties = append(st.Properties, p)
	}
	if hub != nil {
		ap, err := accessProvider(*hub, mc.Name)
		if err != nil {
			return st, err
		}
		st.AccessProviders = []multiclusterv1alpha1.AccessProvider{ap}
	}
	return st, nil
}

// refreshAfter is when the properties of st are next due to be observed
// again, from now: ObservedRefresh after the oldest, and no sooner than
// minRefreshCheck when that is past (the agent has not renewed since). Zero
// when st has no properties.
func refreshAfter(st multiclusterv1alpha1.ClusterProfileStatus, now time.Time) time.Duration {
	var oldest time.Time
	for _, p := range st.Properties {
		if oldest.IsZero() || p.LastObservedTime.Time.Before(oldest) {
			oldest = p.LastObservedTime.Time
		}
	}
	if oldest.IsZero() {
		return 0
	}
	return max(oldest.Add(ObservedRefresh).Sub(now), minRefreshCheck)
}

// minRefreshCheck spaces the checks of a cluster whose lease stopped.
const minRefreshCheck = 30 * time.Second
