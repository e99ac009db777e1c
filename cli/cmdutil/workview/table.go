package workview

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// notReported fills a condition column whose condition was never set.
const notReported = "-"

// maxNarrowValue is the longest feedback value the narrow table shows whole.
const maxNarrowValue = 40

// WorkTable renders works as table rows: one per work, each followed by
// one indented row per manifest with its own conditions, status feedback
// and drift. withCluster adds the CLUSTER column (the work's namespace);
// wide adds Progressing, full API versions and condition messages.
func WorkTable(items []workv1.ManifestWork, now time.Time, wide, withCluster bool) (header []string, rows [][]string) {
	header = []string{"NAME", "APPLIED", "AVAILABLE", "DEGRADED"}
	if wide {
		header = append(header, "PROGRESSING")
	}
	header = append(header, "DETAILS")
	if wide {
		header = append(header, "MESSAGE")
	}
	header = append(header, "AGE")
	if withCluster {
		header = append([]string{"CLUSTER"}, header...)
	}
	row := func(cluster, name string, conds []metav1.Condition, details, message, age string) []string {
		r := []string{name,
			WorkConditionColumn(conds, workv1.WorkApplied),
			WorkConditionColumn(conds, workv1.WorkAvailable),
			WorkConditionColumn(conds, workv1.WorkDegraded)}
		if wide {
			r = append(r, WorkConditionColumn(conds, workv1.WorkProgressing))
		}
		r = append(r, details)
		if wide {
			r = append(r, message)
		}
		r = append(r, age)
		if withCluster {
			r = append([]string{cluster}, r...)
		}
		return r
	}
	for _, w := range items {
		rows = append(rows, row(w.Namespace, w.Name, w.Status.Conditions, workDetails(w), conditionMessages(w.Status.Conditions), cmdutil.AgeColumn(w.CreationTimestamp, now)))
		for _, m := range ManifestRows(w) {
			rows = append(rows, row("", "  "+ResourceColumn(m.ResourceMeta, wide), m.Conditions, ManifestDetails(m, now, wide), conditionMessages(m.Conditions), ""))
		}
	}
	return header, rows
}

// WorkConditionColumn shows a condition's status, or that it was never reported.
func WorkConditionColumn(conds []metav1.Condition, t string) string {
	if c := meta.FindStatusCondition(conds, t); c != nil {
		return string(c.Status)
	}
	return notReported
}

// ManifestRows are the manifests the agent reported on or, before it did,
// those of the spec (without conditions), so that a new work shows what
// it holds.
func ManifestRows(w workv1.ManifestWork) []workv1.ManifestCondition {
	if len(w.Status.ResourceStatus.Manifests) > 0 {
		return w.Status.ResourceStatus.Manifests
	}
	rows := make([]workv1.ManifestCondition, 0, len(w.Spec.Workload.Manifests))
	for i, m := range w.Spec.Workload.Manifests {
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(m.Raw, &obj) // admission let in only objects
		group, version, _ := strings.Cut(obj.APIVersion, "/")
		if version == "" {
			group, version = "", group
		}
		rows = append(rows, workv1.ManifestCondition{ResourceMeta: workv1.ManifestResourceMeta{
			Ordinal: int32(i), Group: group, Version: version, Kind: obj.Kind, Name: obj.Metadata.Name, Namespace: obj.Metadata.Namespace,
		}})
	}
	return rows
}

// ResourceColumn names a manifest's object: "Deployment default/hello",
// wide "apps/v1 Deployment default/hello".
func ResourceColumn(m workv1.ManifestResourceMeta, wide bool) string {
	kind := m.Kind
	if kind == "" {
		kind = m.Resource
	}
	if kind == "" {
		kind = "manifest " + strconv.Itoa(int(m.Ordinal))
	}
	name := m.Name
	if m.Namespace != "" {
		name = m.Namespace + "/" + name
	}
	s := kind + " " + name
	if wide && m.Version != "" {
		gv := m.Version
		if m.Group != "" {
			gv = m.Group + "/" + m.Version
		}
		s = gv + " " + s
	}
	return strings.TrimSpace(s)
}

// workDetails sums a work up: how many manifests, whether the agent has
// reported yet, drift corrections, deletion.
func workDetails(w workv1.ManifestWork) string {
	var parts []string
	if w.DeletionTimestamp != nil {
		parts = append(parts, "deleting")
	}
	n := len(w.Spec.Workload.Manifests)
	parts = append(parts, cmdutil.Plural(n, "manifest"))
	if len(w.Status.Conditions) == 0 {
		parts = append(parts, "not reported by the cluster's agent yet")
	}
	var corrections int64
	for _, m := range w.Status.ResourceStatus.Manifests {
		if m.Drift != nil {
			corrections += m.Drift.Corrections
		}
	}
	if corrections > 0 {
		parts = append(parts, "drift corrected "+cmdutil.Plural(int(corrections), "time"))
	}
	return strings.Join(parts, ", ")
}

// ManifestDetails lists a manifest's status feedback (Name=value), the
// conditions besides the columns', and its drift corrections.
func ManifestDetails(m workv1.ManifestCondition, now time.Time, wide bool) string {
	var parts []string
	for _, v := range m.StatusFeedback.Values {
		parts = append(parts, v.Name+"="+feedbackValue(v.Value, wide))
	}
	for _, c := range m.Conditions {
		switch c.Type {
		case workv1.ManifestApplied, workv1.ManifestAvailable, workv1.ManifestDegraded, workv1.ManifestProgressing:
			continue // in columns
		case workv1.ManifestStatusFeedbackSynced:
			if c.Status == metav1.ConditionTrue {
				continue // the normal state says nothing
			}
		case workv1.ManifestDrifted:
			if c.Status == metav1.ConditionFalse {
				continue
			}
		}
		parts = append(parts, c.Type+"="+string(c.Status))
	}
	if d := m.Drift; d != nil && d.Corrections > 0 {
		s := "drift corrected " + cmdutil.Plural(int(d.Corrections), "time")
		if wide {
			s += " (last " + cmdutil.AgeColumn(d.LastCorrectedTime, now) + " ago"
			if len(d.Fields) > 0 {
				s += ": " + strings.Join(d.Fields, ",")
			}
			s += ")"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "<none>"
	}
	return strings.Join(parts, " ")
}

// feedbackValue renders one status feedback value; the narrow table cuts
// long JSON short.
func feedbackValue(v workv1.FieldValue, wide bool) string {
	switch {
	case v.Integer != nil:
		return strconv.FormatInt(*v.Integer, 10)
	case v.Boolean != nil:
		return strconv.FormatBool(*v.Boolean)
	case v.String != nil:
		if *v.String == "" || strings.ContainsAny(*v.String, " \t\n\"=") {
			return strconv.Quote(*v.String)
		}
		return *v.String
	case v.JSONRaw != nil:
		s := *v.JSONRaw
		if !wide && len(s) > maxNarrowValue {
			s = s[:maxNarrowValue-3] + "..."
		}
		return s
	}
	return "<none>"
}

// conditionMessages lists the messages of conditions that are not in their
// good state: Applied, Available or StatusFeedbackSynced not True; Degraded
// or Drifted True; any False condition set by a rule.
func conditionMessages(conds []metav1.Condition) string {
	var msgs []string
	for _, c := range conds {
		bad := c.Status != metav1.ConditionTrue
		switch c.Type {
		case workv1.WorkDegraded, workv1.ManifestDrifted:
			bad = c.Status == metav1.ConditionTrue
		case workv1.WorkProgressing, workv1.WorkComplete, workv1.WorkDeleting:
			bad = false
		}
		if bad && c.Message != "" {
			msgs = append(msgs, c.Type+": "+c.Message)
		}
	}
	if len(msgs) == 0 {
		return "<none>"
	}
	return strings.Join(msgs, "; ")
}
