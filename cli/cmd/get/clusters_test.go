package get

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
)

func TestClusterTable(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	joined := clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name:              "cluster1",
			CreationTimestamp: metav1.Time{Time: now.Add(-3 * time.Hour)},
			Labels:            map[string]string{"env": "prod", "cluster.open-cluster-management.io/clusterset": "default"},
		},
		Spec: clusterv1.ManagedClusterSpec{
			HubAcceptsClient:            true,
			ManagedClusterClientConfigs: []clusterv1.ClientConfig{{URL: "https://cluster1:6443"}},
		},
		Status: clusterv1.ManagedClusterStatus{
			Conditions: []metav1.Condition{
				{Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue},
				{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionFalse},
			},
			Capacity: clusterv1.ResourceList{clusterv1.ResourceCPU: resource.MustParse("8"), clusterv1.ResourceMemory: resource.MustParse("32Gi")},
			Version:  clusterv1.ManagedClusterVersion{Kubernetes: "v1.36.3"},
		},
	}
	pending := clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster2", CreationTimestamp: metav1.Time{Time: now.Add(-90 * time.Second)}}}

	tests := []struct {
		name       string
		wide       bool
		wantHeader []string
		wantRows   [][]string
	}{
		{
			name:       "narrow",
			wantHeader: []string{"NAME", "ACCEPTED", "JOINED", "AVAILABLE", "KUBERNETES VERSION", "AGE"},
			wantRows: [][]string{
				{"cluster1", "True", "True", "False", "v1.36.3", "3h"},
				{"cluster2", "False", "Unknown", "Unknown", "<none>", "90s"},
			},
		},
		{
			name:       "wide",
			wide:       true,
			wantHeader: []string{"NAME", "ACCEPTED", "JOINED", "AVAILABLE", "KUBERNETES VERSION", "AGE", "TUNNEL", "CPU", "MEMORY", "LABELS", "URL"},
			wantRows: [][]string{
				{"cluster1", "True", "True", "False", "v1.36.3", "3h", "Unknown", "8", "32Gi", "cluster.open-cluster-management.io/clusterset=default,env=prod", "https://cluster1:6443"},
				{"cluster2", "False", "Unknown", "Unknown", "<none>", "90s", "Unknown", "<none>", "<none>", "<none>", "<none>"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header, rows := clusterTable([]clusterv1.ManagedCluster{joined, pending}, now, tt.wide)
			if diff := cmp.Diff(tt.wantHeader, header); diff != "" {
				t.Errorf("header (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantRows, rows); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}
