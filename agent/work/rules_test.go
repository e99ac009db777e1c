package work

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

func TestEvaluateRules(t *testing.T) {
	if _, err := newCELEnv(); err != nil {
		t.Fatal(err)
	}
	c := newCELCache()
	deployment := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	job := schema.GroupKind{Group: "batch", Kind: "Job"}
	ready := `{"spec":{"replicas":2},"status":{"readyReplicas":2}}`
	cel := func(cond string, exprs ...string) workv1.ConditionRule {
		return workv1.ConditionRule{Condition: cond, Type: workv1.CELConditionExpressionsType, CelExpressions: exprs}
	}
	type want struct{ status, reason, message string }
	tests := []struct {
		name   string
		gk     schema.GroupKind
		object string
		rules  []workv1.ConditionRule
		want   map[string]want
	}{
		{"true", deployment, ready, []workv1.ConditionRule{cel("Ready", "object.status.readyReplicas == object.spec.replicas")},
			map[string]want{"Ready": {"True", workv1.ConditionRuleEvaluated, "Ready is True"}}},
		{"every expression must hold", deployment, ready,
			[]workv1.ConditionRule{cel("Ready", "object.spec.replicas == 2", "object.status.readyReplicas > 2")},
			map[string]want{"Ready": {"False", workv1.ConditionRuleEvaluated, "Ready is False"}}},
		{"a message and a message expression", deployment, ready, []workv1.ConditionRule{
			{Condition: "Ready", Type: workv1.CELConditionExpressionsType, CelExpressions: []string{"true"}, Message: "fixed"},
			{Condition: "Sized", Type: workv1.CELConditionExpressionsType, CelExpressions: []string{"true"},
				MessageExpression: `result ? "has " + string(object.status.readyReplicas) + " ready" : ""`}},
			map[string]want{"Ready": {"True", workv1.ConditionRuleEvaluated, "fixed"}, "Sized": {"True", workv1.ConditionRuleEvaluated, "has 2 ready"}}},
		{"an expression that does not compile", deployment, ready, []workv1.ConditionRule{cel("Ready", "object.status.readyReplicas ==")},
			map[string]want{"Ready": {"False", workv1.ConditionRuleInvalid, "Syntax error"}, workv1.ManifestDegraded: {"True", workv1.ConditionRuleInvalid, "Invalid condition rules: condition Ready"}}},
		{"an expression that is not boolean", deployment, ready, []workv1.ConditionRule{cel("Ready", `"yes"`)},
			map[string]want{"Ready": {"False", workv1.ConditionRuleInvalid, "not bool"}, workv1.ManifestDegraded: {"True", workv1.ConditionRuleInvalid, ""}}},
		{"an expression that fails on this object", deployment, `{"spec":{}}`, []workv1.ConditionRule{cel("Ready", "object.status.readyReplicas == 1")},
			map[string]want{"Ready": {"False", workv1.ConditionRuleExpressionError, "no such key"}}},
		{"no expressions", deployment, ready, []workv1.ConditionRule{cel("Ready")},
			map[string]want{"Ready": {"False", workv1.ConditionRuleInvalid, "needs celExpressions"}, workv1.ManifestDegraded: {"True", workv1.ConditionRuleInvalid, ""}}},
		{"an invalid condition type", deployment, ready, []workv1.ConditionRule{cel("not a type", "true")},
			map[string]want{workv1.ManifestDegraded: {"True", workv1.ConditionRuleInvalid, `condition "not a type" is not a valid condition type`}}},
		{"a Job that finished is Complete", job, `{"status":{"conditions":[{"type":"Complete","status":"True"}]}}`,
			[]workv1.ConditionRule{{Condition: workv1.ManifestComplete, Type: workv1.WellKnownConditionsType}},
			map[string]want{workv1.ManifestComplete: {"True", workv1.ConditionRuleEvaluated, ""}}},
		{"a Job that runs is not", job, `{"status":{"active":1}}`,
			[]workv1.ConditionRule{{Condition: workv1.ManifestComplete, Type: workv1.WellKnownConditionsType}},
			map[string]want{workv1.ManifestComplete: {"False", workv1.ConditionRuleEvaluated, ""}}},
		{"no well-known conditions for the kind", deployment, ready,
			[]workv1.ConditionRule{{Condition: workv1.ManifestComplete, Type: workv1.WellKnownConditionsType}}, map[string]want{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.evaluateRules(tt.gk, obj(t, tt.object), tt.rules)
			if len(got) != len(tt.want) {
				t.Errorf("got %d conditions %+v, want %d", len(got), got, len(tt.want))
			}
			for _, cond := range got {
				w, ok := tt.want[cond.Type]
				if !ok {
					t.Errorf("unexpected condition %+v", cond)
					continue
				}
				if string(cond.Status) != w.status || cond.Reason != w.reason || !strings.Contains(cond.Message, w.message) {
					t.Errorf("%s: got %s/%s %q, want %s/%s with %q", cond.Type, cond.Status, cond.Reason, cond.Message, w.status, w.reason, w.message)
				}
				if cond.Status != metav1.ConditionTrue && cond.Status != metav1.ConditionFalse {
					t.Errorf("%s: status %s", cond.Type, cond.Status)
				}
			}
		})
	}
}
