package workview

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// StrategyText says a rollout strategy briefly, e.g. "Progressive, 1 at a time".
func StrategyText(s workv1alpha1.RolloutStrategy) string {
	typ := s.Type
	if typ == "" {
		typ = workv1alpha1.All
	}
	parts := []string{"rollout " + string(typ)}
	if s.Type == workv1alpha1.Progressive && s.Progressive != nil && s.Progressive.MaxConcurrency.String() != "0" {
		parts = append(parts, s.Progressive.MaxConcurrency.String()+" at a time")
	}
	cfg := rolloutConfig(s)
	if d := cfg.ProgressDeadline; d != "" && d != workv1alpha1.ProgressDeadlineNone {
		parts = append(parts, "deadline "+d)
	}
	if cfg.MinSuccessTime.Duration > 0 {
		parts = append(parts, "min success "+cfg.MinSuccessTime.Duration.String())
	}
	if typ != workv1alpha1.All {
		parts = append(parts, "max failures "+cfg.MaxFailures.String())
	}
	return strings.Join(parts, ", ")
}

// DivisionText says a replica division briefly, e.g. "3 replicas divided by weight (cluster1=2, others 1)".
func DivisionText(d *workv1alpha1.ReplicaDivision) string {
	total := "the replicas"
	if d.TotalReplicas != nil {
		total = cmdutil.Plural(int(*d.TotalReplicas), "replica")
	}
	var weights []string
	for _, w := range d.Weights {
		who := strings.Join(w.ClusterNames, ",")
		if w.ClusterSelector != nil {
			who = strings.TrimPrefix(who+",", ",") + "[" + metav1.FormatLabelSelector(w.ClusterSelector) + "]"
		}
		weights = append(weights, fmt.Sprintf("%s=%d", who, w.Weight))
	}
	def := int32(1)
	if d.DefaultWeight != nil {
		def = *d.DefaultWeight
	}
	weights = append(weights, fmt.Sprintf("others %d", def))
	how := "by weight"
	if d.Type == workv1alpha1.ReplicaDivisionAllocatable {
		how = "by allocatable " + d.Resource + " times weight"
	}
	return fmt.Sprintf("%s divided %s (%s)", total, how, strings.Join(weights, ", "))
}
