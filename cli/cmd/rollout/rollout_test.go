package rollout

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil/workview"
)

func replicaSet() *workv1alpha1.ManifestWorkReplicaSet {
	return &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web", Generation: 3}}
}

func TestUndoTarget(t *testing.T) {
	revs := func(current int64, numbers ...int64) []workview.Revision {
		var out []workview.Revision
		for _, n := range numbers {
			out = append(out, workview.Revision{Number: n, Current: n == current})
		}
		return out
	}
	for _, tt := range []struct {
		name    string
		revs    []workview.Revision
		to      int64
		want    int64
		wantErr string
	}{
		{"the one before the current", revs(3, 1, 2, 3), 0, 2, ""},
		{"numbers need not follow each other (an undo renumbers)", revs(5, 2, 4, 5), 0, 4, ""},
		{"the newest when the current spec is not recorded yet (it will be the next)", revs(0, 1, 2), 0, 2, ""},
		{"a revision asked for", revs(3, 1, 2, 3), 1, 1, ""},
		{"none before the first", revs(1, 1), 0, 0, "has no revision before the current one to go back to (it has revisions 1)"},
		{"one that does not exist", revs(3, 1, 2, 3), 7, 0, "has no revision 7: it has revisions 1, 2, 3 (see "},
		{"no revisions at all", nil, 2, 0, "has no revision 2: it has no revisions yet"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := undoTarget(replicaSet(), tt.revs, tt.to)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want it to say %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got.Number != tt.want {
				t.Fatalf("got %+v, %v; want revision %d", got, err, tt.want)
			}
		})
	}
	unreadable := revs(2, 1, 2)
	unreadable[0].DataErr = "bad JSON"
	if _, err := undoTarget(replicaSet(), unreadable, 1); err == nil || !strings.Contains(err.Error(), "cannot be read (bad JSON)") {
		t.Errorf("undo to an unreadable revision: %v", err)
	}
	if _, err := undoTarget(replicaSet(), unreadable, 0); err == nil {
		t.Error("the default undo chose an unreadable revision")
	}
}

func TestWriteHistory(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	rs := replicaSet()
	rs.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.ManifestWorkReplicaSetConditionRolledBack, Status: metav1.ConditionTrue,
		Reason: workv1alpha1.ReasonRolledBack, ObservedGeneration: 3, Message: "revision 2 failed on c1: Degraded; rolled back to revision 1"}}
	revs := []workview.Revision{
		{Number: 1, Created: now.Add(-time.Hour), Author: "alice", Clusters: 4, Status: "complete", Summary: "Deployment default/web added"},
		{Number: 2, Created: now.Add(-5 * time.Minute), Clusters: 0, Current: true, Status: "current, failed, rolled back", Summary: "Deployment default/web: image nginx:1.27 → nginx:bad"},
	}
	var out bytes.Buffer
	if err := writeHistory(&out, rs, revs, now); err != nil {
		t.Fatal(err)
	}
	want := `REVISION   CREATED   AUTHOR   CLUSTERS   STATUS                         SUMMARY
1          60m ago   alice    4          complete                       Deployment default/web added
2          5m ago    -        0          current, failed, rolled back   Deployment default/web: image nginx:1.27 → nginx:bad
RolledBack: RolledBack: revision 2 failed on c1: Degraded; rolled back to revision 1
`
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	revs[1].Current = false
	if err := writeHistory(&out, replicaSet(), revs, now); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "The current spec is not among them yet") || strings.Contains(out.String(), "RolledBack:") {
		t.Errorf("printed\n%s", out.String())
	}
}

func TestWriteRevision(t *testing.T) {
	rev := &workview.Revision{Number: 2, Name: "web-5f6d", Created: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), Status: "current, failed",
		Failed: "cluster c1: Degraded: image pull failed", Clusters: 1}
	three := int32(3)
	rev.Data.ReplicaDivision = &workv1alpha1.ReplicaDivision{TotalReplicas: &three}
	var out bytes.Buffer
	if err := writeRevision(&out, replicaSet(), rev); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"ManifestWorkReplicaSet apps/web, revision 2 (ControllerRevision web-5f6d)\n",
		"Created:   2026-01-01T12:00:00Z\n", "Author:    -\n", "Status:    current, failed\n",
		"Failed:    cluster c1: Degraded: image pull failed\n", "Data:\n  ", "\n  replicaDivision:\n    totalReplicas: 3\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed\n%s\nwithout %q", out.String(), want)
		}
	}
}
