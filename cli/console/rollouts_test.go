package console

import (
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
