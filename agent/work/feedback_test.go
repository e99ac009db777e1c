package work

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

func TestFeedbackValues(t *testing.T) {
	deployment := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	integer := func(name string, v int64) workv1.FeedbackValue {
		return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To(v)}}
	}
	str := func(name, v string) workv1.FeedbackValue {
		return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.String, String: ptr.To(v)}}
	}
	raw := func(name, v string) workv1.FeedbackValue {
		return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.JSONRaw, JSONRaw: ptr.To(v)}}
	}
	paths := func(p ...workv1.JSONPath) []workv1.FeedbackRule {
		return []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JSONPaths: p}}
	}
	wellKnown := []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}}
	tests := []struct {
		name   string
		gk     schema.GroupKind
		object string
		rules  []workv1.FeedbackRule
		want   []workv1.FeedbackValue
		err    string
	}{
		{"well-known Deployment status", deployment, `{"status":{"replicas":3,"readyReplicas":2,"availableReplicas":1}}`, wellKnown,
			[]workv1.FeedbackValue{integer("ReadyReplicas", 2), integer("Replicas", 3), integer("AvailableReplicas", 1)}, ""},
		{"missing fields report nothing", deployment, `{"status":{"replicas":3}}`, wellKnown, []workv1.FeedbackValue{integer("Replicas", 3)}, ""},
		{"no status at all", deployment, `{"spec":{}}`, wellKnown, nil, ""},
		{"well-known Job status", schema.GroupKind{Group: "batch", Kind: "Job"},
			`{"status":{"succeeded":1,"conditions":[{"type":"Complete","status":"True"}]}}`, wellKnown,
			[]workv1.FeedbackValue{str("JobComplete", "True"), integer("JobSucceeded", 1)}, ""},
		{"well-known Pod status", schema.GroupKind{Kind: "Pod"},
			`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"False"}]}}`, wellKnown,
			[]workv1.FeedbackValue{str("PodReady", "False"), str("PodPhase", "Running")}, ""},
		{"no well-known status for the kind", schema.GroupKind{Kind: "ConfigMap"}, `{"status":{"a":1}}`, wellKnown, nil, ""},
		{"typed JSONPaths", deployment, `{"status":{"n":4,"s":"x","b":true,"f":0.5,"l":[1,2],"o":{"k":"v"}}}`,
			paths(workv1.JSONPath{Name: "n", Path: ".n"}, workv1.JSONPath{Name: "s", Path: ".s"}, workv1.JSONPath{Name: "b", Path: ".b"},
				workv1.JSONPath{Name: "f", Path: ".f"}, workv1.JSONPath{Name: "l", Path: ".l"}, workv1.JSONPath{Name: "o", Path: ".o"}),
			[]workv1.FeedbackValue{integer("n", 4), str("s", "x"), {Name: "b", Value: workv1.FieldValue{Type: workv1.Boolean, Boolean: ptr.To(true)}},
				raw("f", "0.5"), raw("l", "[1,2]"), raw("o", `{"k":"v"}`)}, ""},
		{"a filter", deployment, `{"status":{"conditions":[{"type":"Available","status":"True"},{"type":"Progressing","status":"False"}]}}`,
			paths(workv1.JSONPath{Name: "available", Path: `.conditions[?(@.type=="Available")].status`}),
			[]workv1.FeedbackValue{str("available", "True")}, ""},
		{"a value over 1 KiB", deployment, `{"status":{"big":"` + strings.Repeat("x", 10) + `","list":["` + strings.Repeat("y", 1100) + `"]}}`,
			paths(workv1.JSONPath{Name: "big", Path: ".big"}, workv1.JSONPath{Name: "list", Path: ".list"}),
			[]workv1.FeedbackValue{str("big", strings.Repeat("x", 10))}, "list: the value is 1104 bytes of JSON, over the limit of 1024"},
		{"an invalid path", deployment, `{"status":{"a":1}}`, paths(workv1.JSONPath{Name: "bad", Path: ".a[?("}), nil, `bad: invalid JSONPath ".a[?("`},
		{"a name given twice", deployment, `{"status":{"replicas":1}}`,
			append(wellKnown, paths(workv1.JSONPath{Name: "Replicas", Path: ".replicas"})...),
			[]workv1.FeedbackValue{integer("Replicas", 1)}, "Replicas: reported twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := feedbackValues(tt.gk, obj(t, tt.object), tt.rules)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("error %v, want one containing %q", err, tt.err)
			}
		})
	}
}

func TestFeedbackCondition(t *testing.T) {
	tests := []struct {
		name   string
		values []workv1.FeedbackValue
		err    error
		status metav1.ConditionStatus
		reason string
	}{
		{"values", []workv1.FeedbackValue{{Name: "a"}}, nil, metav1.ConditionTrue, workv1.ReasonStatusFeedbackSynced},
		{"nothing yet", nil, nil, metav1.ConditionTrue, workv1.ReasonNoStatusFeedbackSynced},
		{"a problem", []workv1.FeedbackValue{{Name: "a"}}, errTest, metav1.ConditionFalse, workv1.ReasonStatusFeedbackSyncFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := feedbackCondition(tt.values, tt.err, 3)
			if c.Type != workv1.ManifestStatusFeedbackSynced || c.Status != tt.status || c.Reason != tt.reason || c.ObservedGeneration != 3 {
				t.Errorf("got %+v, want status %s reason %s", c, tt.status, tt.reason)
			}
		})
	}
}
