package scheduler

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
)

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name      string
		placement *clusterv1beta1.Placement
		want      []string
	}{
		{name: "valid", placement: newPlacement(requireLabels("env", "prod"), requireCEL(`managedCluster.metadata.name != ""`))},
		{name: "CEL that does not compile", placement: newPlacement(requireCEL(`managedCluster.metadata.name ==`)),
			want: []string{"spec.predicates[0].requiredClusterSelector.celSelector.celExpressions[0]: does not compile"}},
		{name: "CEL with an unknown variable", placement: newPlacement(requireCEL(`cluster.name == "a"`)),
			want: []string{"celExpressions[0]", "undeclared reference to 'cluster'"}},
		{name: "CEL that is not a bool", placement: newPlacement(requireCEL(`managedCluster.metadata.name`, `1 + 1`)),
			want: []string{"celExpressions[1]: yields int, not bool"}},
		{name: "unknown prioritizer", placement: newPlacement(prioritize("", builtIn("Fastest", 1))),
			want: []string{`spec.prioritizerPolicy.configurations[0].scoreCoordinate.builtIn: unknown prioritizer "Fastest": use one of Balance, Steady`}},
		{name: "AddOn without names", placement: newPlacement(prioritize("", clusterv1beta1.PrioritizerConfig{ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: "AddOn"}})),
			want: []string{"needs addOn.resourceName and addOn.scoreName"}},
		{name: "weight out of range", placement: newPlacement(prioritize("", builtIn("Balance", 11))), want: []string{"weight: 11 is outside -10..10"}},
		{name: "invalid label selector", placement: newPlacement(func(p *clusterv1beta1.Placement) {
			p.Spec.Predicates = []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near"}}}}}}
		}), want: []string{"spec.predicates[0].requiredClusterSelector.labelSelector"}},
		{name: "Equal toleration without key", placement: newPlacement(tolerate(clusterv1beta1.Toleration{Value: "x"})),
			want: []string{"spec.tolerations[0]: operator Equal needs a key"}},
		{name: "bad percentage", placement: newPlacement(func(p *clusterv1beta1.Placement) {
			p.Spec.DecisionStrategy.GroupStrategy.ClustersPerDecisionGroup = intstr.FromString("150%")
		}), want: []string{"clustersPerDecisionGroup"}},
		{name: "bad rate limit", placement: newPlacement(func(p *clusterv1beta1.Placement) { p.Spec.ScoreRateLimit = "soon" }),
			want: []string{"spec.scoreRateLimit"}},
		{name: "several problems are all reported", placement: newPlacement(count(-1), requireCEL(`(`), prioritize("", builtIn("Nope", 1))),
			want: []string{"spec.numberOfClusters", "celExpressions[0]", "Nope"}},
		{name: "spread without a key type", placement: newPlacement(func(p *clusterv1beta1.Placement) {
			p.Spec.SpreadPolicy.SpreadConstraints = []clusterv1beta1.SpreadConstraintsTerm{{TopologyKey: "zone", MaxSkew: 1}}
		}), want: []string{"spec.spreadPolicy.spreadConstraints[0].topologyKeyType"}},
		{name: "tolerationSeconds negative", placement: newPlacement(tolerate(clusterv1beta1.Toleration{Operator: "Exists", TolerationSeconds: ptr.To[int64](-1)})),
			want: []string{"tolerationSeconds: -1 is negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := compile(tt.placement)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want one containing %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestGroupLength(t *testing.T) {
	tests := []struct {
		v       intstr.IntOrString
		total   int
		want    int
		wantErr bool
	}{
		{intstr.IntOrString{}, 7, 7, false},
		{intstr.FromString(""), 7, 7, false},
		{intstr.FromString("100%"), 7, 7, false},
		{intstr.FromString("25%"), 7, 2, false},
		{intstr.FromString("1%"), 7, 1, false},
		{intstr.FromInt32(3), 7, 3, false},
		{intstr.FromString("3"), 7, 3, false},
		{intstr.FromInt32(30), 7, 7, false},
		{intstr.FromInt32(0), 7, 7, false},
		{intstr.FromString("0%"), 7, 0, true},
		{intstr.FromString("many"), 7, 0, true},
	}
	for _, tt := range tests {
		got, err := groupLength(tt.v, tt.total)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("groupLength(%s, %d) = %d, %v; want %d, error %v", tt.v.String(), tt.total, got, err, tt.want, tt.wantErr)
		}
	}
}
