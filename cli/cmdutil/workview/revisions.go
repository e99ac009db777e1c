package workview

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// Revision is one revision of a replica set as `rollout history` and the
// console show it: its ControllerRevision, read.
type Revision struct {
	Number  int64     `json:"revision"`
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
	Author  string    `json:"author,omitempty"`
	Summary string    `json:"summary,omitempty"`
	// Clusters counts the replica set's ManifestWorks rendered from it;
	// ClusterNames are their clusters, by name.
	Clusters     int      `json:"clusters"`
	ClusterNames []string `json:"clusterNames,omitempty"`
	// Current: the replica set's spec is this revision's data.
	Current bool `json:"current,omitempty"`
	// CompleteAt is when it was Available on every chosen cluster (zero: never).
	CompleteAt time.Time `json:"completeAt,omitzero"`
	// Failed says why it was rolled back (empty: it was not).
	Failed string `json:"failed,omitempty"`
	// Status sums the above up with the replica set's RolledBack
	// condition: current, complete, failed, rolling back, rolled back, ...
	Status string                    `json:"status"`
	Data   workv1alpha1.RevisionData `json:"data"`
	// DataErr says why Data could not be read.
	DataErr string `json:"dataError,omitempty"`
}

// LoadRevisions reads the revisions of a replica set (its ControllerRevisions,
// by label) and its ManifestWorks, oldest revision first.
func LoadRevisions(ctx context.Context, r client.Reader, rs *workv1alpha1.ManifestWorkReplicaSet) ([]Revision, error) {
	owner := client.MatchingLabels{workv1.ManifestWorkReplicaSetLabel: rs.Namespace + "." + rs.Name}
	crs := &appsv1.ControllerRevisionList{}
	if err := r.List(ctx, crs, client.InNamespace(rs.Namespace), owner); err != nil {
		return nil, fmt.Errorf("list the ControllerRevisions of ManifestWorkReplicaSet %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	works := &workv1.ManifestWorkList{}
	if err := r.List(ctx, works, owner); err != nil {
		return nil, fmt.Errorf("list the ManifestWorks of ManifestWorkReplicaSet %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	return BuildRevisions(rs, crs.Items, works.Items), nil
}

// BuildRevisions reads the revisions crs of rs, counting the works that
// carry each, oldest first. Only ControllerRevisions rs controls count.
func BuildRevisions(rs *workv1alpha1.ManifestWorkReplicaSet, crs []appsv1.ControllerRevision, works []workv1.ManifestWork) []Revision {
	carried := map[string][]string{}
	for _, w := range works {
		rev := w.Annotations[workv1alpha1.RevisionAnnotation]
		carried[rev] = append(carried[rev], w.Namespace)
	}
	spec := SpecRevisionData(&rs.Spec)
	out := make([]Revision, 0, len(crs))
	for i := range crs {
		cr := &crs[i]
		if ref := metav1.GetControllerOf(cr); ref != nil && ref.UID != rs.UID && rs.UID != "" {
			continue
		}
		rev := Revision{Number: cr.Revision, Name: cr.Name, Created: cr.CreationTimestamp.Time,
			Clusters: len(carried[cr.Name]), ClusterNames: slices.Sorted(slices.Values(carried[cr.Name])),
			Author: cr.Annotations[workv1alpha1.RevisionAuthorAnnotation], Summary: cr.Annotations[workv1alpha1.RevisionSummaryAnnotation],
			Failed: cr.Annotations[workv1alpha1.RevisionFailedAnnotation]}
		if at, err := time.Parse(time.RFC3339, cr.Annotations[workv1alpha1.RevisionCompleteAnnotation]); err == nil {
			rev.CompleteAt = at
		}
		if err := json.Unmarshal(cr.Data.Raw, &rev.Data); err != nil {
			rev.DataErr = err.Error()
		} else {
			rev.Current = SameRevisionData(rev.Data, spec)
		}
		out = append(out, rev)
	}
	slices.SortFunc(out, func(a, b Revision) int { return int(a.Number - b.Number) })
	rolledBack := RollbackCondition(rs)
	for i := range out {
		out[i].Status = out[i].status(rolledBack)
	}
	return out
}

// status sums a revision up; rolledBack is the replica set's RolledBack
// condition, which speaks of the current revision.
func (r Revision) status(rolledBack *metav1.Condition) string {
	var s []string
	if r.Current {
		s = append(s, "current")
	}
	if !r.CompleteAt.IsZero() {
		s = append(s, "complete")
	}
	if r.Failed != "" {
		s = append(s, "failed")
		if r.Current && rolledBack != nil {
			s = append(s, rollbackWords[rolledBack.Reason])
		}
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(slices.DeleteFunc(s, func(w string) bool { return w == "" }), ", ")
}

// rollbackWords say where the rollback of a failed revision stands, by
// the reason of condition RolledBack.
var rollbackWords = map[string]string{
	workv1alpha1.ReasonRollingBack:        "rolling back",
	workv1alpha1.ReasonRolledBack:         "rolled back",
	workv1alpha1.ReasonRollbackFailed:     "rollback failed",
	workv1alpha1.ReasonNoCompleteRevision: "not rolled back (no complete revision before it)",
}

// RollbackCondition is the replica set's RolledBack condition when it
// speaks of its current spec, else nil.
func RollbackCondition(rs *workv1alpha1.ManifestWorkReplicaSet) *metav1.Condition {
	c := meta.FindStatusCondition(rs.Status.Conditions, workv1alpha1.ManifestWorkReplicaSetConditionRolledBack)
	if c == nil || c.ObservedGeneration < rs.Generation {
		return nil
	}
	return c
}

// SpecRevisionData is the part of a replica set's spec a revision keeps.
func SpecRevisionData(spec *workv1alpha1.ManifestWorkReplicaSetSpec) workv1alpha1.RevisionData {
	return workv1alpha1.RevisionData{ManifestWorkTemplate: spec.ManifestWorkTemplate, Overrides: spec.Overrides, ReplicaDivision: spec.ReplicaDivision}
}

// SameRevisionData says whether a and b shape the same works. They are
// compared as JSON values, so that manifests whose raw bytes differ only
// in spacing or key order are the same.
func SameRevisionData(a, b workv1alpha1.RevisionData) bool {
	ja, errA := canonical(a)
	jb, errB := canonical(b)
	return errA == nil && errB == nil && reflect.DeepEqual(ja, jb)
}

func canonical(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(data, &out)
}

// CurrentRevision is the revision the replica set's spec is, or nil when
// the hub has not recorded it yet.
func CurrentRevision(revs []Revision) *Revision {
	for i := range revs {
		if revs[i].Current {
			return &revs[i]
		}
	}
	return nil
}

// RevisionNumbers lists the revisions' numbers, for a message.
func RevisionNumbers(revs []Revision) string {
	s := make([]string, 0, len(revs))
	for _, r := range revs {
		s = append(s, fmt.Sprint(r.Number))
	}
	return strings.Join(s, ", ")
}
