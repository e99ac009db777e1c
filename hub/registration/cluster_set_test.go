package registration

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta2 "github.com/flotilla-io/flotilla/api/cluster/v1beta2"
)

func TestPutInDefaultSet(t *testing.T) {
	tests := []struct {
		name    string
		labels  map[string]string
		wantSet string
		want    bool
	}{
		{name: "no labels", labels: nil, wantSet: clusterv1beta2.DefaultManagedClusterSetName, want: true},
		{name: "empty label", labels: map[string]string{clusterv1beta2.ClusterSetLabel: ""}, wantSet: clusterv1beta2.DefaultManagedClusterSetName, want: true},
		{name: "other labels only", labels: map[string]string{"env": "prod"}, wantSet: clusterv1beta2.DefaultManagedClusterSetName, want: true},
		{name: "a set of its own", labels: map[string]string{clusterv1beta2.ClusterSetLabel: "prod"}, wantSet: "prod", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cluster := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Labels: tt.labels}}
			if got := putInDefaultSet(cluster); got != tt.want {
				t.Errorf("putInDefaultSet = %v, want %v", got, tt.want)
			}
			if got := cluster.Labels[clusterv1beta2.ClusterSetLabel]; got != tt.wantSet {
				t.Errorf("set label = %q, want %q", got, tt.wantSet)
			}
			if tt.labels["env"] != "" && cluster.Labels["env"] != tt.labels["env"] {
				t.Errorf("other labels changed: %v", cluster.Labels)
			}
		})
	}
}
