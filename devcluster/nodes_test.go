package devcluster

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestDesiredNodes(t *testing.T) {
	o := DefaultOptions()
	o.Name, o.Nodes, o.Region, o.Zones = "c1", 3, "us-east-1", []string{"us-east-1a", "us-east-1b"}
	o.NodeCPU, o.NodeMemory = resource.MustParse("4"), resource.MustParse("16Gi")
	nodes := desiredNodes(o)

	var got []string
	for _, n := range nodes {
		got = append(got, n.Name+" "+n.Labels[corev1.LabelTopologyRegion]+" "+n.Labels[corev1.LabelTopologyZone])
		if n.Annotations[kwokAnnotation] != "fake" || n.Labels[NodeLabel] != "true" {
			t.Errorf("node %s is not marked for kwok and as a dev node: %v %v", n.Name, n.Annotations, n.Labels)
		}
		cpu, mem := n.Status.Capacity[corev1.ResourceCPU], n.Status.Allocatable[corev1.ResourceMemory]
		if cpu.String() != "4" || mem.String() != "16Gi" {
			t.Errorf("node %s: cpu %s memory %s, want 4 and 16Gi", n.Name, cpu.String(), mem.String())
		}
	}
	want := []string{"c1-node-1 us-east-1 us-east-1a", "c1-node-2 us-east-1 us-east-1b", "c1-node-3 us-east-1 us-east-1a"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}

	o.Region, o.Zones = "", nil
	for _, n := range desiredNodes(o) {
		if _, ok := n.Labels[corev1.LabelTopologyRegion]; ok {
			t.Errorf("node %s has a region label though none was asked for", n.Name)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Options)
		want   string
	}{
		{"defaults", func(*Options) {}, ""},
		{"no nodes", func(o *Options) { o.Nodes = 0 }, "--nodes 0"},
		{"zero cpu", func(o *Options) { o.NodeCPU = resource.MustParse("0") }, "--node-cpu 0 must be positive"},
		{"negative memory", func(o *Options) { o.NodeMemory = resource.MustParse("-1Gi") }, "--node-memory -1Gi must be positive"},
		{"bad name", func(o *Options) { o.Name = "Dev_1" }, `--name "Dev_1"`},
		{"bad zone", func(o *Options) { o.Zones = []string{"a zone"} }, `--zone "a zone" is not a valid label value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			o.DataDir = t.TempDir()
			tt.change(&o)
			err := o.validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

func TestStagesCoverNodesAndPods(t *testing.T) {
	s, err := stages()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for ref, list := range s {
		got[ref.APIGroup+"/"+ref.Kind] = len(list)
	}
	// Nodes: initialize and heartbeat; Pods: ready, complete and delete.
	if diff := cmp.Diff(map[string]int{"v1/Node": 2, "v1/Pod": 3}, got); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
}
