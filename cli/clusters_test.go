package cli

import (
	"bytes"
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

func TestPrintTable(t *testing.T) {
	var out bytes.Buffer
	if err := printTable(&out, []string{"NAME", "ACCEPTED"}, [][]string{{"a-long-name", "True"}, {"b", "False"}}); err != nil {
		t.Fatal(err)
	}
	want := "NAME          ACCEPTED\na-long-name   True\nb             False\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}

func TestPrintData(t *testing.T) {
	info := joinInfo{HubToken: "abcdef.0123456789abcdef", HubAPIServer: "https://hub:6443"}
	tests := []struct {
		format, want string
	}{
		{outputJSON, "{\n  \"hub-token\": \"abcdef.0123456789abcdef\",\n  \"hub-apiserver\": \"https://hub:6443\"\n}\n"},
		{outputYAML, "hub-apiserver: https://hub:6443\nhub-token: abcdef.0123456789abcdef\n"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		if err := printData(&out, tt.format, info); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, out.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.format, diff)
		}
	}
}

func TestCheckOutput(t *testing.T) {
	tests := []struct {
		format string
		offers []string
		ok     bool
	}{
		{"", nil, true},
		{"json", []string{"json", "yaml"}, true},
		{"wide", []string{"json", "yaml"}, false},
		{"table", []string{"wide", "json", "yaml"}, false},
	}
	for _, tt := range tests {
		if err := checkOutput(tt.format, tt.offers...); (err == nil) != tt.ok {
			t.Errorf("checkOutput(%q, %v) = %v, want ok=%t", tt.format, tt.offers, err, tt.ok)
		}
	}
}
