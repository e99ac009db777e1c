package console

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// A row's markers do not overlap when its events share a second (the
// conditions' times have whole seconds), nor at the end of the axis, and
// stay in the order of their times.
func TestTimelineMarkersApart(t *testing.T) {
	start := time.Now().Add(-time.Minute).Truncate(time.Second)
	work := func(cluster string, pushed, applied, available time.Time) client.Object {
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "web", Generation: 1,
			Labels:      map[string]string{workv1.ManifestWorkReplicaSetLabel: "apps.web"},
			Annotations: map[string]string{workv1alpha1.RolloutTimeAnnotation: pushed.UTC().Format(time.RFC3339)}}}
		w.Status.Conditions = []metav1.Condition{
			{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "Test", ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(applied)},
			{Type: workv1.WorkAvailable, Status: metav1.ConditionTrue, Reason: "Test", ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(available)},
		}
		return w
	}
	mwrs := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"}}
	now := time.Now().Truncate(time.Second)
	s, session, _ := serverWith(t, nil, mwrs,
		work("same-second", start, start, start),
		work("one-second", start.Add(5*time.Second), start.Add(5*time.Second), start.Add(6*time.Second)),
		work("at-the-end", now, now, now),
		work("later-applied", start, start.Add(20*time.Second), start.Add(20*time.Second)))
	w := do(s, "GET", "/rollouts/apps/web", testHost, session, nil, "")
	if w.Code != http.StatusOK {
		t.Fatalf("GET: %d %s", w.Code, w.Body.String())
	}
	rows := regexp.MustCompile(`(?s)<g transform="translate\(0,\d+\)"[^>]*>\s*<text[^>]*>([^<]+)</text>.*?<circle[^>]*cx="(-?\d+)".*?<rect[^>]*x="(-?\d+)" y="3" width="10"`).FindAllStringSubmatch(w.Body.String(), -1)
	if len(rows) != 4 {
		t.Fatalf("found %d timeline rows with both markers, want 4:\n%s", len(rows), w.Body.String())
	}
	for _, r := range rows {
		cx, _ := strconv.Atoi(r[2])
		x, _ := strconv.Atoi(r[3])
		// The circle's box (r=5, stroke 2) is cx±6; the square's x..x+10.
		if x < cx+6+1 {
			t.Errorf("row %s: the applied circle (%d..%d) and the available square (%d..%d) overlap or are out of order", r[1], cx-6, cx+6, x, x+10)
		}
		if cx-6 < -6 || x+10 > timelineWidth+5 {
			t.Errorf("row %s: a marker leaves the axis: circle %d, square %d..%d", r[1], cx, x, x+10)
		}
	}
}

// The rollout view lists the revisions newest first, with who made each,
// the clusters that carry it and where it stands, the rollback condition,
// and the revision of each cluster's work in the timeline's table.
func TestRolloutRevisions(t *testing.T) {
	yes := true
	mwrs := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web", UID: "u1", Generation: 2}}
	mwrs.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"bad"}}`)}}}
	mwrs.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.ManifestWorkReplicaSetConditionRolledBack, Status: metav1.ConditionTrue, ObservedGeneration: 2,
		Reason: workv1alpha1.ReasonRolledBack, Message: "revision 2 failed on c1 (Degraded: boom); c1 is back on revision 1", LastTransitionTime: metav1.Now()}}
	revision := func(n int64, name, data string, kv ...string) client.Object {
		cr := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, Annotations: map[string]string{},
			Labels:          map[string]string{workv1.ManifestWorkReplicaSetLabel: "apps.web"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "work.open-cluster-management.io/v1alpha1", Kind: "ManifestWorkReplicaSet", Name: "web", UID: "u1", Controller: &yes}}},
			Revision: n, Data: runtime.RawExtension{Raw: []byte(data)}}
		for i := 0; i+1 < len(kv); i += 2 {
			cr.Annotations[kv[i]] = kv[i+1]
		}
		return cr
	}
	work := func(cluster, rev string) client.Object {
		return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "web",
			Labels: map[string]string{workv1.ManifestWorkReplicaSetLabel: "apps.web"}, Annotations: map[string]string{workv1alpha1.RevisionAnnotation: rev}}}
	}
	s, session, _ := serverWith(t, nil, mwrs,
		revision(1, "web-aaa", `{"manifestWorkTemplate":{"workload":{"manifests":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"good"}}]}}}`,
			workv1alpha1.RevisionAuthorAnnotation, "alice", workv1alpha1.RevisionCompleteAnnotation, "2026-01-01T12:00:00Z",
			workv1alpha1.RevisionSummaryAnnotation, "ConfigMap good added"),
		revision(2, "web-bbb", `{"manifestWorkTemplate":{"workload":{"manifests":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad"}}]}}}`,
			workv1alpha1.RevisionAuthorAnnotation, "bob", workv1alpha1.RevisionFailedAnnotation, "c1: Degraded: boom",
			workv1alpha1.RevisionSummaryAnnotation, "ConfigMap good removed, ConfigMap bad added"),
		work("c1", "web-aaa"), work("c2", "web-aaa"))
	w := do(s, "GET", "/rollouts/apps/web", testHost, session, nil, "")
	if w.Code != http.StatusOK {
		t.Fatalf("GET: %d %s", w.Code, w.Body.String())
	}
	body := w.Body.String()
	rows := regexp.MustCompile(`(?s)<tr(?: class="current")?><th scope="row">(\d+)</th><td>[^<]*</td><td>(\w+)</td><td>(\d+)[^<]*(.*?)</td><td>([^<]*)`).FindAllStringSubmatch(body, -1)
	if len(rows) != 2 {
		t.Fatalf("found %d revision rows, want 2:\n%s", len(rows), body)
	}
	if r := rows[0]; r[1] != "2" || r[2] != "bob" || r[3] != "0" || r[5] != "current, failed, rolled back" {
		t.Errorf("first row (newest) %q", r[1:])
	}
	if r := rows[1]; r[1] != "1" || r[2] != "alice" || r[3] != "2" || !strings.Contains(r[4], `<a href="/clusters/c1">c1</a>, <a href="/clusters/c2">c2</a>`) || r[5] != "complete" {
		t.Errorf("second row %q", r[1:])
	}
	for _, want := range []string{"c1: Degraded: boom", "ConfigMap good removed, ConfigMap bad added", `id="rollback"`,
		"revision 2 failed on c1 (Degraded: boom); c1 is back on revision 1", "flotilla rollout undo web -n apps --to-revision N"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page does not show %q:\n%s", want, body)
		}
	}
	if n := len(regexp.MustCompile(`<a href="/clusters/c[12]">c[12]</a></th><td>[^<]*</td><td>1</td>`).FindAllString(body, -1)); n != 2 {
		t.Errorf("%d timeline rows show revision 1, want 2:\n%s", n, body)
	}
	w = do(s, "GET", "/rollouts", testHost, session, nil, "")
	if !strings.Contains(w.Body.String(), workv1alpha1.ReasonRolledBack) {
		t.Errorf("the rollouts list does not say RolledBack:\n%s", w.Body.String())
	}
}
