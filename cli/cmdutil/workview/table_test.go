package workview

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

func TestWorkTable(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	cond := func(t string, s metav1.ConditionStatus, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: s, Message: msg}
	}
	deployment := workv1.ManifestResourceMeta{Ordinal: 0, Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "default", Name: "hello"}
	namespace := workv1.ManifestResourceMeta{Ordinal: 1, Version: "v1", Kind: "Namespace", Resource: "namespaces", Name: "prod"}
	applied := workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "hello", CreationTimestamp: metav1.Time{Time: now.Add(-5 * time.Minute)}},
		Spec:       workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: make([]workv1.Manifest, 2)}},
		Status: workv1.ManifestWorkStatus{
			Conditions: []metav1.Condition{
				cond(workv1.WorkApplied, metav1.ConditionTrue, "Apply manifest work complete"),
				cond(workv1.WorkAvailable, metav1.ConditionFalse, "1 of 2 resources are not available"),
				cond(workv1.WorkProgressing, metav1.ConditionFalse, ""),
			},
			ResourceStatus: workv1.ManifestResourceStatus{Manifests: []workv1.ManifestCondition{
				{
					ResourceMeta: deployment,
					StatusFeedback: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{
						{Name: "AvailableReplicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](1)}},
						{Name: "phase", Value: workv1.FieldValue{Type: workv1.String, String: ptr.To("Running fine")}},
						{Name: "ready", Value: workv1.FieldValue{Type: workv1.Boolean, Boolean: ptr.To(true)}},
						{Name: "spec", Value: workv1.FieldValue{Type: workv1.JSONRaw, JSONRaw: ptr.To(`{"replicas":1,"selector":{"matchLabels":{"app":"hello"}}}`)}},
					}},
					Conditions: []metav1.Condition{
						cond(workv1.ManifestApplied, metav1.ConditionTrue, "Apply manifest complete"),
						cond(workv1.ManifestAvailable, metav1.ConditionTrue, "Resource is available"),
						cond(workv1.ManifestStatusFeedbackSynced, metav1.ConditionTrue, ""),
						cond(workv1.ManifestDrifted, metav1.ConditionFalse, ""),
						cond("Healthy", metav1.ConditionFalse, "replicas not ready"),
					},
					Drift: &workv1.ManifestDrift{Corrections: 2, LastCorrectedTime: metav1.Time{Time: now.Add(-time.Minute)}, Fields: []string{"spec", "metadata.labels"}},
				},
				{
					ResourceMeta: namespace,
					Conditions: []metav1.Condition{
						cond(workv1.ManifestApplied, metav1.ConditionFalse, "namespaces \"prod\" is forbidden"),
						cond(workv1.ManifestAvailable, metav1.ConditionUnknown, ""),
					},
				},
			}},
		},
	}
	fresh := workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: "cluster2", Name: "new", CreationTimestamp: metav1.Time{Time: now.Add(-3 * time.Second)}},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns"}}`)}},
		}}},
	}
	deleting := fresh.DeepCopy()
	deleting.Name, deleting.DeletionTimestamp = "old", &metav1.Time{Time: now}

	tests := []struct {
		name        string
		items       []workv1.ManifestWork
		wide        bool
		withCluster bool
		wantHeader  []string
		wantRows    [][]string
	}{
		{
			name:       "applied work of one cluster",
			items:      []workv1.ManifestWork{applied},
			wantHeader: []string{"NAME", "APPLIED", "AVAILABLE", "DEGRADED", "DETAILS", "AGE"},
			wantRows: [][]string{
				{"hello", "True", "False", "-", "2 manifests, drift corrected 2 times", "5m"},
				{"  Deployment default/hello", "True", "True", "-", `AvailableReplicas=1 phase="Running fine" ready=true spec={"replicas":1,"selector":{"matchLabel... Healthy=False drift corrected 2 times`, ""},
				{"  Namespace prod", "False", "Unknown", "-", "<none>", ""},
			},
		},
		{
			name:       "wide",
			items:      []workv1.ManifestWork{applied},
			wide:       true,
			wantHeader: []string{"NAME", "APPLIED", "AVAILABLE", "DEGRADED", "PROGRESSING", "DETAILS", "MESSAGE", "AGE"},
			wantRows: [][]string{
				{"hello", "True", "False", "-", "False", "2 manifests, drift corrected 2 times", "Available: 1 of 2 resources are not available", "5m"},
				{"  apps/v1 Deployment default/hello", "True", "True", "-", "-",
					`AvailableReplicas=1 phase="Running fine" ready=true spec={"replicas":1,"selector":{"matchLabels":{"app":"hello"}}} Healthy=False drift corrected 2 times (last 60s ago: spec,metadata.labels)`,
					"Healthy: replicas not ready", ""},
				{"  v1 Namespace prod", "False", "Unknown", "-", "-", "<none>", `Applied: namespaces "prod" is forbidden`, ""},
			},
		},
		{
			name:        "unreported and deleting works of every cluster",
			items:       []workv1.ManifestWork{fresh, *deleting},
			withCluster: true,
			wantHeader:  []string{"CLUSTER", "NAME", "APPLIED", "AVAILABLE", "DEGRADED", "DETAILS", "AGE"},
			wantRows: [][]string{
				{"cluster2", "new", "-", "-", "-", "1 manifest, not reported by the cluster's agent yet", "3s"},
				{"", "  ConfigMap ns/c", "-", "-", "-", "<none>", ""},
				{"cluster2", "old", "-", "-", "-", "deleting, 1 manifest, not reported by the cluster's agent yet", "3s"},
				{"", "  ConfigMap ns/c", "-", "-", "-", "<none>", ""},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header, rows := WorkTable(tt.items, now, tt.wide, tt.withCluster)
			if diff := cmp.Diff(tt.wantHeader, header); diff != "" {
				t.Errorf("header (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantRows, rows); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFeedbackValue(t *testing.T) {
	tests := []struct {
		name string
		v    workv1.FieldValue
		wide bool
		want string
	}{
		{"integer", workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](-3)}, false, "-3"},
		{"plain string", workv1.FieldValue{Type: workv1.String, String: ptr.To("Running")}, false, "Running"},
		{"empty string", workv1.FieldValue{Type: workv1.String, String: ptr.To("")}, false, `""`},
		{"string with =", workv1.FieldValue{Type: workv1.String, String: ptr.To("a=b")}, false, `"a=b"`},
		{"boolean", workv1.FieldValue{Type: workv1.Boolean, Boolean: ptr.To(false)}, false, "false"},
		{"short json", workv1.FieldValue{Type: workv1.JSONRaw, JSONRaw: ptr.To(`[1,2]`)}, false, "[1,2]"},
		{"no value", workv1.FieldValue{Type: workv1.Integer}, false, "<none>"},
	}
	for _, tt := range tests {
		if got := feedbackValue(tt.v, tt.wide); got != tt.want {
			t.Errorf("%s: feedbackValue = %q, want %q", tt.name, got, tt.want)
		}
	}
}
