package work

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

var errTest = errors.New("test failure")

func TestDriftStatus(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	earlier := metav1.NewTime(now.Add(-time.Hour))
	prev := &workv1.ManifestDrift{Corrections: 2, LastCorrectedTime: earlier, Fields: []string{"spec"}}
	corrected := &metav1.Condition{Type: workv1.ManifestDrifted, Status: metav1.ConditionFalse, Reason: workv1.ReasonDriftCorrected, Message: "earlier"}
	stuck := &metav1.Condition{Type: workv1.ManifestDrifted, Status: metav1.ConditionTrue, Reason: workv1.ReasonDriftNotCorrected}
	tests := []struct {
		name       string
		prev       *workv1.ManifestDrift
		prevCond   *metav1.Condition
		d          *drift
		want       *workv1.ManifestDrift
		wantStatus metav1.ConditionStatus
		wantReason string
		wantMsg    string
	}{
		{"never drifted", nil, nil, nil, nil, "", "", ""},
		{"no drift this time", prev, corrected, nil, prev, metav1.ConditionFalse, workv1.ReasonDriftCorrected, "earlier"},
		{"a drift that went away by itself", prev, stuck, nil, prev, metav1.ConditionFalse, workv1.ReasonDriftCorrected, "matches its manifest again"},
		{"a first correction", nil, nil, &drift{fields: []string{"data"}},
			&workv1.ManifestDrift{Corrections: 1, LastCorrectedTime: metav1.NewTime(now), Fields: []string{"data"}},
			metav1.ConditionFalse, workv1.ReasonDriftCorrected, "Put back 1 time(s), last at 2026-05-01T12:00:00Z: data had changed"},
		{"another correction", prev, corrected, &drift{fields: []string{"metadata.labels", "spec"}},
			&workv1.ManifestDrift{Corrections: 3, LastCorrectedTime: metav1.NewTime(now), Fields: []string{"metadata.labels", "spec"}},
			metav1.ConditionFalse, workv1.ReasonDriftCorrected, "metadata.labels, spec had changed"},
		{"a deleted object put back", prev, corrected, &drift{fields: []string{workv1.DriftWholeObject}},
			&workv1.ManifestDrift{Corrections: 3, LastCorrectedTime: metav1.NewTime(now), Fields: []string{"*"}},
			metav1.ConditionFalse, workv1.ReasonDriftCorrected, "had been deleted"},
		{"a drift that cannot be put back", prev, corrected, &drift{fields: []string{"data"}, err: errTest}, prev,
			metav1.ConditionTrue, workv1.ReasonDriftNotCorrected, "(data had changed on the managed cluster) and cannot be put back: test failure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, c := driftStatus(tt.prev, tt.prevCond, tt.d, now)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
			if tt.wantStatus == "" {
				if c != nil {
					t.Errorf("condition %+v, want none", c)
				}
				return
			}
			if c == nil || c.Type != workv1.ManifestDrifted || c.Status != tt.wantStatus || c.Reason != tt.wantReason || !strings.Contains(c.Message, tt.wantMsg) {
				t.Errorf("condition %+v, want status %s reason %s message with %q", c, tt.wantStatus, tt.wantReason, tt.wantMsg)
			}
		})
	}
	if prev.Corrections != 2 {
		t.Error("driftStatus changed the previous record")
	}
}
