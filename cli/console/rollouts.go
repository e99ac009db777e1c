package console

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil/workview"
)

// rolloutRow is one ManifestWorkReplicaSet.
type rolloutRow struct {
	Namespace, Name string
	Placements      []string
	Strategies      []string
	State           string
	// Why is PlacementRolledOut's message: why it stopped, or how far it is.
	Why                                      string
	Total, Applied, Available, Degraded, Pro int
	Paused                                   bool
}

// rolloutsData is the rollouts view's model.
type rolloutsData struct {
	Rows    []rolloutRow
	Visible bool
}

// rolloutData is one rollout's view: its row and its clusters' timeline.
type rolloutData struct {
	Row      rolloutRow
	Clusters []timelineRow
	// Chart is the timeline as SVG geometry.
	Start, End   time.Time
	Width        int
	WorksVisible bool
	Revisions    revisionsData
}

// timelineRow is one cluster's progress: when its spec was written, when
// the work was applied and became available.
type timelineRow struct {
	Cluster, Placement, State   string
	Pushed, Applied, Available  time.Time
	X0, XApplied, XAvailable, Y int
	HasApplied, HasAvailable    bool
	// MApplied and MAvailable are where the markers are drawn: at
	// XApplied and XAvailable, moved apart when they would overlap (the
	// conditions' times have whole seconds, and often share one).
	MApplied, MAvailable int
	Message              string
	// Revision is the number of the revision its ManifestWork carries (0: unknown).
	Revision int64
}

// markerGap is the least distance between the centres of a row's two
// markers: each is 12 units wide with its stroke, and 2 apart.
const markerGap = 14

// layOut places the markers of a row where they do not overlap, within
// the time axis, in the order of their times.
func (c *timelineRow) layOut() {
	c.MApplied, c.MAvailable = c.XApplied, c.XAvailable
	if !c.HasApplied || !c.HasAvailable {
		return
	}
	first, second := &c.MApplied, &c.MAvailable
	if c.Available.Before(c.Applied) {
		first, second = second, first
	}
	if *second-*first >= markerGap {
		return
	}
	*second = min(*first+markerGap, timelineWidth)
	*first = *second - markerGap
}

func (s *server) rollouts(r *http.Request) (*page, error) {
	d := &rolloutsData{}
	list := &workv1alpha1.ManifestWorkReplicaSetList{}
	d.Visible = s.store.list(r.Context(), kindReplicaSets, list)
	for i := range list.Items {
		d.Rows = append(d.Rows, rolloutRowOf(&list.Items[i]))
	}
	slices.SortFunc(d.Rows, func(a, b rolloutRow) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return &page{Title: "Rollouts", Section: "rollouts", Data: d}, nil
}

func rolloutRowOf(m *workv1alpha1.ManifestWorkReplicaSet) rolloutRow {
	row := rolloutRow{Namespace: m.Namespace, Name: m.Name, Paused: m.Annotations[workv1alpha1.PausedAnnotation] == "true",
		Total: m.Status.Summary.Total, Applied: m.Status.Summary.Applied, Available: m.Status.Summary.Available,
		Degraded: m.Status.Summary.Degraded, Pro: m.Status.Summary.Progressing}
	for _, p := range m.Spec.PlacementRefs {
		row.Placements = append(row.Placements, p.Name)
		row.Strategies = append(row.Strategies, strategyText(p.RolloutStrategy))
	}
	c := meta.FindStatusCondition(m.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut)
	switch {
	case row.Paused:
		row.State = "Paused"
	case c == nil:
		row.State = "Pending"
	case c.Status == "True":
		row.State = "Complete"
	case c.Reason == workv1alpha1.ReasonProgressing:
		row.State = "Progressing"
	default:
		row.State = "Stopped"
	}
	if c != nil {
		row.Why = c.Message
	}
	if rb := workview.RollbackCondition(m); rb != nil {
		// The rollout of a failed revision is over: what matters is its rollback.
		row.State, row.Why = rb.Reason, rb.Message
	}
	if v := meta.FindStatusCondition(m.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionPlacementVerified); v != nil && v.Status != "True" {
		row.Why = strings.TrimPrefix(row.Why+"; "+v.Message, "; ")
	}
	return row
}

func strategyText(st workv1alpha1.RolloutStrategy) string {
	t := string(st.Type)
	if t == "" {
		t = string(workv1alpha1.All)
	}
	if p := st.Progressive; p != nil && st.Type == workv1alpha1.Progressive {
		if p.MaxConcurrency.String() != "0" && p.MaxConcurrency.String() != "" {
			t += ", maxConcurrency " + p.MaxConcurrency.String()
		}
		if p.MaxFailures.String() != "0" {
			t += ", maxFailures " + p.MaxFailures.String()
		}
	}
	return t
}

// timelineWidth is the width of the timeline's time axis in SVG units.
const timelineWidth = 600

func (s *server) rollout(r *http.Request) (*page, error) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	m := &workv1alpha1.ManifestWorkReplicaSet{}
	if s.store.access[kindReplicaSets.resource].none() || s.store.cache.Get(r.Context(), client.ObjectKey{Namespace: ns, Name: name}, m) != nil {
		return nil, fmt.Errorf("ManifestWorkReplicaSet %s/%s: not found, or your hub RBAC does not let you see it", ns, name)
	}
	d := &rolloutData{Row: rolloutRowOf(m), Width: timelineWidth, End: time.Now()}
	works := &workv1.ManifestWorkList{}
	d.WorksVisible = s.store.list(r.Context(), kindWorks, works, client.MatchingLabels{workv1.ManifestWorkReplicaSetLabel: ns + "." + name})
	d.Revisions = s.revisionsOf(r.Context(), m, works.Items)
	numbers := revisionNumbers(d.Revisions.Revisions)
	for i := range works.Items {
		row := timelineOf(&works.Items[i])
		row.Revision = numbers[works.Items[i].Annotations[workv1alpha1.RevisionAnnotation]]
		d.Clusters = append(d.Clusters, row)
	}
	slices.SortFunc(d.Clusters, func(a, b timelineRow) int {
		if c := a.Pushed.Compare(b.Pushed); c != 0 {
			return c
		}
		return strings.Compare(a.Cluster, b.Cluster)
	})
	for _, c := range d.Clusters {
		if !c.Pushed.IsZero() && (d.Start.IsZero() || c.Pushed.Before(d.Start)) {
			d.Start = c.Pushed
		}
	}
	span := d.End.Sub(d.Start)
	if span <= 0 {
		span = time.Second
	}
	x := func(t time.Time) int { return int(float64(t.Sub(d.Start)) / float64(span) * timelineWidth) }
	for i := range d.Clusters {
		c := &d.Clusters[i]
		c.Y = i * 22
		c.X0 = x(c.Pushed)
		c.XApplied, c.HasApplied = x(c.Applied), !c.Applied.IsZero()
		c.XAvailable, c.HasAvailable = x(c.Available), !c.Available.IsZero()
		c.layOut()
	}
	return &page{Title: "Rollout " + ns + "/" + name, Section: "rollouts", Data: d}, nil
}

func timelineOf(w *workv1.ManifestWork) timelineRow {
	t := timelineRow{Cluster: w.Namespace, Placement: w.Labels[workv1.ManifestWorkReplicaSetPlacementNameLabel], State: "Pending"}
	if at, err := time.Parse(time.RFC3339, w.Annotations[workv1alpha1.RolloutTimeAnnotation]); err == nil {
		t.Pushed = at
	} else {
		t.Pushed = w.CreationTimestamp.Time
	}
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied); c != nil && c.Status == "True" && c.ObservedGeneration == w.Generation {
		t.Applied, t.State = maxTime(c.LastTransitionTime.Time, t.Pushed), "Applied"
	}
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkAvailable); c != nil && c.Status == "True" && c.ObservedGeneration == w.Generation {
		t.Available, t.State = maxTime(c.LastTransitionTime.Time, t.Pushed), "Available"
	}
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkDegraded); c != nil && c.Status == "True" {
		t.State, t.Message = "Degraded", c.Message
	}
	for _, c := range w.Status.Conditions {
		if c.Status == "False" && c.Message != "" && t.Message == "" {
			t.Message = c.Type + ": " + c.Message
		}
	}
	return t
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
