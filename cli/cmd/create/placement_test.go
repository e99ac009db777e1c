package create

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

func TestParsePrioritizer(t *testing.T) {
	tests := []struct {
		in      string
		want    clusterv1beta1.PrioritizerConfig
		wantErr string
	}{
		{in: "Balance", want: clusterv1beta1.PrioritizerConfig{Weight: ptr.To[int32](1),
			ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: "BuiltIn", BuiltIn: "Balance"}}},
		{in: "resourceallocatablecpu:-3", want: clusterv1beta1.PrioritizerConfig{Weight: ptr.To[int32](-3),
			ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: "BuiltIn", BuiltIn: "ResourceAllocatableCPU"}}},
		{in: "usage/cpuFree:10", want: clusterv1beta1.PrioritizerConfig{Weight: ptr.To[int32](10),
			ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: "AddOn", AddOn: &clusterv1beta1.AddOnScore{ResourceName: "usage", ScoreName: "cpuFree"}}}},
		{in: "Fastest", wantErr: `unknown prioritizer "Fastest": use one of Balance, Steady, ResourceAllocatableCPU`},
		{in: "Steady:11", wantErr: `the weight "11" is not a whole number from -10 to 10`},
		{in: "Steady:x", wantErr: "not a whole number"},
		{in: "usage/:1", wantErr: "RESOURCE/SCORE, both non-empty"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parsePrioritizer(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *got.Weight != *tt.want.Weight || got.ScoreCoordinate.Type != tt.want.ScoreCoordinate.Type ||
				got.ScoreCoordinate.BuiltIn != tt.want.ScoreCoordinate.BuiltIn ||
				(tt.want.ScoreCoordinate.AddOn != nil && *got.ScoreCoordinate.AddOn != *tt.want.ScoreCoordinate.AddOn) {
				t.Errorf("got %+v %+v, want %+v %+v", got.ScoreCoordinate, *got.Weight, tt.want.ScoreCoordinate, *tt.want.Weight)
			}
		})
	}
}

func TestPlacementFromFlags(t *testing.T) {
	o := &createPlacementOptions{Globals: &cmdutil.Globals{}, namespace: "apps", clusterSets: []string{"prod", " prod", "eu"},
		labelSelectors: []string{"env=prod,region in (eu,us)", "gpu"}, count: 2, prioritizers: []string{"Steady:2"}, mode: "exact", timeout: time.Minute}
	p, err := o.placement("web", true)
	if err != nil {
		t.Fatal(err)
	}
	if p.Namespace != "apps" || p.Name != "web" || *p.Spec.NumberOfClusters != 2 || strings.Join(p.Spec.ClusterSets, ",") != "prod,eu" ||
		p.Spec.PrioritizerPolicy.Mode != clusterv1beta1.PrioritizerPolicyModeExact || len(p.Spec.PrioritizerPolicy.Configurations) != 1 {
		t.Errorf("placement %+v", p)
	}
	if len(p.Spec.Predicates) != 2 {
		t.Fatalf("%d predicates, want one per --label-selectors", len(p.Spec.Predicates))
	}
	first := p.Spec.Predicates[0].RequiredClusterSelector.LabelSelector
	if metav1.FormatLabelSelector(&first) != "env=prod,region in (eu,us)" {
		t.Errorf("first selector %s", metav1.FormatLabelSelector(&first))
	}

	o.count = 0
	if p, _ := o.placement("web", false); p.Spec.NumberOfClusters != nil {
		t.Error("--count not given, but numberOfClusters set")
	}
	for _, bad := range []struct {
		change func(*createPlacementOptions)
		name   string
		want   string
	}{
		{func(o *createPlacementOptions) {}, "Web", `"Web" is not a valid Placement name`},
		{func(o *createPlacementOptions) { o.labelSelectors = []string{"env in ("} }, "web", `--label-selectors "env in ("`},
		{func(o *createPlacementOptions) { o.count = -1 }, "web", "--count -1 is negative"},
		{func(o *createPlacementOptions) { o.mode = "best" }, "web", `--prioritizer-mode "best" is neither Additive nor Exact`},
		{func(o *createPlacementOptions) { o.clusterSets = []string{"Prod"} }, "web", "--clustersets"},
	} {
		o2 := *o
		o2.labelSelectors = nil
		bad.change(&o2)
		if _, err := o2.placement(bad.name, true); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("error %v, want one containing %q", err, bad.want)
		}
	}
}
