package scheduler

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
)

func TestPredicates(t *testing.T) {
	prod := newCluster("prod-1", labelled("env", "prod", "tier", "gold"), claimed("region.open-cluster-management.io", "eu-west-1"),
		func(c *clusterv1.ManagedCluster) { c.Status.Version.Kubernetes = "v1.31.2" })
	dev := newCluster("dev-1", labelled("env", "dev"), claimed("region.open-cluster-management.io", "us-east-1"),
		func(c *clusterv1.ManagedCluster) { c.Status.Version.Kubernetes = "v1.29.0" })
	claims := func(key string, op metav1.LabelSelectorOperator, values ...string) placementOpt {
		return func(p *clusterv1beta1.Placement) {
			p.Spec.Predicates = append(p.Spec.Predicates, clusterv1beta1.ClusterPredicate{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
				ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}}}}})
		}
	}
	tests := []struct {
		name      string
		placement *clusterv1beta1.Placement
		want      map[string]bool
		wantIndex int
		wantCEL   string
	}{
		{name: "no predicates: every cluster", placement: newPlacement(), want: map[string]bool{"prod-1": true, "dev-1": true}, wantIndex: -1},
		{name: "label selector", placement: newPlacement(requireLabels("env", "prod")), want: map[string]bool{"prod-1": true}},
		{name: "all labels of one selector must match", placement: newPlacement(requireLabels("env", "prod", "tier", "silver")), want: map[string]bool{}},
		{name: "predicates are ORed", placement: newPlacement(requireLabels("env", "staging"), requireLabels("env", "dev")),
			want: map[string]bool{"dev-1": true}, wantIndex: 1},
		{name: "claim selector", placement: newPlacement(claims("region.open-cluster-management.io", metav1.LabelSelectorOpIn, "eu-west-1", "eu-central-1")),
			want: map[string]bool{"prod-1": true}},
		{name: "claim selector DoesNotExist", placement: newPlacement(claims("gpu", metav1.LabelSelectorOpDoesNotExist)),
			want: map[string]bool{"prod-1": true, "dev-1": true}},
		{name: "CEL on labels", placement: newPlacement(requireCEL(`managedCluster.metadata.labels["env"] == "prod"`)), want: map[string]bool{"prod-1": true}},
		{name: "CEL expressions of one predicate are ANDed",
			placement: newPlacement(requireCEL(`managedCluster.metadata.labels["env"] == "prod"`, `managedCluster.metadata.name.startsWith("dev")`)),
			want:      map[string]bool{}},
		{name: "CEL with semver on the reported version",
			placement: newPlacement(requireCEL(`semver(managedCluster.status.version.kubernetes.substring(1)).isGreaterThan(semver("1.30.0"))`)),
			want:      map[string]bool{"prod-1": true}},
		{name: "CEL over claims", placement: newPlacement(requireCEL(`managedCluster.status.clusterClaims.exists(c, c.name == "region.open-cluster-management.io" && c.value.startsWith("us-"))`)),
			want: map[string]bool{"dev-1": true}},
		{name: "CEL with scores()", placement: newPlacement(requireCEL(`managedCluster.scores("usage").exists(s, s.name == "cpu" && s.value > 50)`)),
			want: map[string]bool{"dev-1": true}},
		{name: "CEL failing at run time is no match",
			placement: newPlacement(requireCEL(`managedCluster.metadata.labels["tier"] == "gold"`)),
			want:      map[string]bool{"prod-1": true}, wantCEL: "no such key"},
		{name: "labels and CEL of one predicate both apply",
			placement: newPlacement(func(p *clusterv1beta1.Placement) {
				p.Spec.Predicates = []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
					LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}},
					CelSelector:   clusterv1beta1.ClusterCelSelector{CelExpressions: []string{`managedCluster.metadata.name == "prod-1"`}},
				}}}
			}),
			want: map[string]bool{}},
	}
	scores := map[string]map[string]*clusterv1alpha1.AddOnPlacementScore{
		"dev-1":  {"usage": score("dev-1", "usage", nil, "cpu", 80)},
		"prod-1": {"usage": score("prod-1", "usage", nil, "cpu", 20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := compile(tt.placement)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			var celErr error
			for _, c := range []*clusterv1.ManagedCluster{prod, dev} {
				got := pl.match(c, scores[c.Name], now)
				if got.ok != tt.want[c.Name] {
					t.Errorf("%s: matched %v, want %v", c.Name, got.ok, tt.want[c.Name])
				}
				if got.ok && got.index != tt.wantIndex {
					t.Errorf("%s: matched predicate %d, want %d", c.Name, got.index, tt.wantIndex)
				}
				if got.celErr != nil {
					celErr = got.celErr
				}
			}
			switch {
			case tt.wantCEL == "" && celErr != nil:
				t.Errorf("unexpected CEL error: %v", celErr)
			case tt.wantCEL != "" && (celErr == nil || !strings.Contains(celErr.Error(), tt.wantCEL)):
				t.Errorf("CEL error %v, want one containing %q", celErr, tt.wantCEL)
			}
		})
	}
}

func TestCELScoresIgnoreExpired(t *testing.T) {
	past := now.Add(-time.Minute)
	p := newPlacement(requireCEL(`managedCluster.scores("usage").size() > 0`))
	pl, err := compile(p)
	if err != nil {
		t.Fatal(err)
	}
	c := newCluster("c1")
	if pl.match(c, map[string]*clusterv1alpha1.AddOnPlacementScore{"usage": score("c1", "usage", &past, "cpu", 1)}, now).ok {
		t.Error("an expired AddOnPlacementScore was visible to scores()")
	}
	future := now.Add(time.Minute)
	if !pl.match(c, map[string]*clusterv1alpha1.AddOnPlacementScore{"usage": score("c1", "usage", &future, "cpu", 1)}, now).ok {
		t.Error("a valid AddOnPlacementScore was not visible to scores()")
	}
}
