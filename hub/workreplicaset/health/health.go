package health

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// Result is the verdict of a health check on one ManifestWork.
type Result struct {
	// Healthy says whether every check held.
	Healthy bool
	// Message says, when not healthy, which manifest, which value and why.
	Message string
}

// healthy is the Result of a check that held.
var healthy = Result{Healthy: true}

// Check checks work w against hc. A nil hc checks nothing: healthy.
func (c *Checker) Check(hc *workv1alpha1.HealthCheck, w *workv1.ManifestWork) Result {
	if hc == nil {
		return healthy
	}
	if r, current := currentStatus(w); !current {
		return r
	}
	var prg *program
	if hc.Expression != "" {
		var err error
		if prg, err = c.compile(hc.Expression); err != nil {
			return Result{Message: fmt.Sprintf("the health check's expression %q %v", hc.Expression, err)}
		}
	}
	checked := 0
	for i := range w.Status.ResourceStatus.Manifests {
		m := &w.Status.ResourceStatus.Manifests[i]
		if !selected(hc.Target, m.ResourceMeta) {
			continue
		}
		if hc.Target == nil && !hasFeedback(w, m) {
			continue
		}
		checked++
		if msg := checkManifest(hc, prg, m); msg != "" {
			return Result{Message: describe(m.ResourceMeta) + ": " + msg}
		}
	}
	if checked == 0 {
		return Result{Message: noManifest(hc.Target)}
	}
	return healthy
}

// currentStatus reports whether w's status is for its current generation,
// and otherwise the Result that says it is not.
func currentStatus(w *workv1.ManifestWork) (Result, bool) {
	avail := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkAvailable)
	switch {
	case avail == nil:
		return Result{Message: fmt.Sprintf("the agent has not reported the status of generation %d yet (no Available condition)", w.Generation)}, false
	case avail.ObservedGeneration != w.Generation:
		return Result{Message: fmt.Sprintf("the agent has not reported the status of generation %d yet (its status feedback is for generation %d)",
			w.Generation, avail.ObservedGeneration)}, false
	}
	return healthy, true
}

// checkManifest runs hc's checks on one manifest; "" means they held.
func checkManifest(hc *workv1alpha1.HealthCheck, prg *program, m *workv1.ManifestCondition) string {
	values := m.StatusFeedback.Values
	if len(values) == 0 {
		return "reports no status feedback yet" + feedbackHint(m)
	}
	for _, fc := range hc.Feedback {
		if msg := checkFeedback(fc, values); msg != "" {
			return msg
		}
	}
	if prg == nil {
		return ""
	}
	vars, err := celValues(values)
	if err != nil {
		return err.Error()
	}
	ok, err := prg.eval(celManifest(m.ResourceMeta), vars)
	switch {
	case err != nil:
		return fmt.Sprintf("expression %q failed: %v (values %s)", prg.expr, err, listValues(values))
	case !ok:
		return fmt.Sprintf("expression %q is false (values %s)", prg.expr, listValues(values))
	}
	return ""
}

// checkFeedback runs one feedback check; "" means it held.
func checkFeedback(fc workv1alpha1.FeedbackCheck, values []workv1.FeedbackValue) string {
	v, ok := find(values, fc.Name)
	if !ok {
		return missing(fc.Name, values)
	}
	got, err := text(v)
	if err != nil {
		return fmt.Sprintf("%s: %v", fc.Name, err)
	}
	switch {
	case fc.EqualsValue != "":
		other, ok := find(values, fc.EqualsValue)
		if !ok {
			return missing(fc.EqualsValue, values)
		}
		want, err := text(other)
		if err != nil {
			return fmt.Sprintf("%s: %v", fc.EqualsValue, err)
		}
		if got != want {
			return fmt.Sprintf("%s is %s, %s is %s: they must be equal", fc.Name, got, fc.EqualsValue, want)
		}
	case got != literal(fc.Equals, v.Type):
		return fmt.Sprintf("%s is %s, not %s", fc.Name, got, fc.Equals)
	}
	return ""
}

// missing says that value name is not reported, and which are.
func missing(name string, values []workv1.FeedbackValue) string {
	names := make([]string, 0, len(values))
	hint := ""
	for _, v := range values {
		names = append(names, v.Name)
		if strings.EqualFold(v.Name, name) {
			hint = fmt.Sprintf(" (names are case-sensitive: did you mean %s?)", v.Name)
		}
	}
	sort.Strings(names)
	return fmt.Sprintf("reports no value %s%s; it reports %s", name, hint, strings.Join(names, ", "))
}

// feedbackHint adds why a manifest has no values, as the agent said it.
func feedbackHint(m *workv1.ManifestCondition) string {
	c := meta.FindStatusCondition(m.Conditions, workv1.ManifestStatusFeedbackSynced)
	if c == nil || c.Message == "" {
		return ""
	}
	return " (" + c.Message + ")"
}

// hasFeedback says whether manifest m reports status feedback, or its work
// asks for some: the template's manifestConfigs name it with feedback rules.
func hasFeedback(w *workv1.ManifestWork, m *workv1.ManifestCondition) bool {
	if len(m.StatusFeedback.Values) > 0 || meta.FindStatusCondition(m.Conditions, workv1.ManifestStatusFeedbackSynced) != nil {
		return true
	}
	rm := m.ResourceMeta
	for _, mc := range w.Spec.ManifestConfigs {
		id := mc.ResourceIdentifier
		if len(mc.FeedbackRules) > 0 && id.Group == rm.Group && id.Resource == rm.Resource && id.Namespace == rm.Namespace && id.Name == rm.Name {
			return true
		}
	}
	return false
}

// selected says whether target picks the manifest; nil picks every one.
func selected(target *workv1alpha1.ManifestSelector, rm workv1.ManifestResourceMeta) bool {
	if target == nil {
		return true
	}
	return (target.APIVersion == "" || target.APIVersion == apiVersion(rm)) &&
		(target.Kind == "" || target.Kind == rm.Kind) &&
		(target.Namespace == "" || target.Namespace == rm.Namespace) &&
		(target.Name == "" || target.Name == rm.Name)
}

// noManifest says that nothing was checked.
func noManifest(target *workv1alpha1.ManifestSelector) string {
	if target == nil {
		return "no manifest reports status feedback to check: give the manifests feedbackRules in the template's manifestConfigs"
	}
	var sel []string
	for _, f := range []struct{ name, value string }{
		{"apiVersion", target.APIVersion}, {"kind", target.Kind}, {"namespace", target.Namespace}, {"name", target.Name},
	} {
		if f.value != "" {
			sel = append(sel, f.name+"="+f.value)
		}
	}
	return fmt.Sprintf("no manifest in the work's status matches the health check's target (%s)", strings.Join(sel, ", "))
}

func apiVersion(rm workv1.ManifestResourceMeta) string {
	if rm.Group == "" {
		return rm.Version
	}
	return rm.Group + "/" + rm.Version
}

// describe names a manifest as users write it: Deployment default/web.
func describe(rm workv1.ManifestResourceMeta) string {
	kind := rm.Kind
	if kind == "" {
		kind = rm.Resource
	}
	if rm.Namespace == "" {
		return kind + " " + rm.Name
	}
	return kind + " " + rm.Namespace + "/" + rm.Name
}
