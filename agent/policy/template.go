package policy

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
)

// template evaluates one policy template and returns its status.details
// entry. The entry starts from the one last reported, so that history
// carries on and a template that is not due keeps what it said.
func (r *reconciler) template(ctx context.Context, s *scope, t engine.PolicyTemplate) (policyv1.DetailsPerTemplate, error) {
	d := previousDetail(s.policy, t)
	d.TemplateMeta = metav1.ObjectMeta{Name: t.DisplayName()}
	if t.Err != nil && !t.HubTemplateError {
		r.templateError(s, &d, t.Err)
		return d, nil
	}
	// Dependencies come before the hub's template error, as OCM checks
	// them: a template that waits is Pending whatever the hub made of it.
	if held, err := r.holdBack(ctx, s, t, &d); held || err != nil {
		// A template held back is not on the cluster: pruneTemplates
		// removes it, as OCM does.
		if held && t.IgnorePending {
			s.ignored[len(s.details)] = true
		}
		return d, err
	}
	if t.Err != nil {
		if t.Name != "" {
			// The hub will resolve it again: what is on the cluster stays,
			// unevaluated, rather than being pruned meanwhile.
			s.keep[t.Name] = true
			s.keepOther[otherKey(t.Kind, t.Name)] = true
		}
		r.templateError(s, &d, t.Err)
		return d, nil
	}
	if t.ConfigurationPolicy == nil {
		return r.otherKind(ctx, s, t, d)
	}
	s.keep[t.Name] = true
	cp, err := r.ensureTemplate(ctx, s.policy, t.ConfigurationPolicy)
	var invalid *invalidTemplateError
	if errors.As(err, &invalid) {
		r.templateError(s, &d, invalid)
		return d, nil
	}
	if err != nil {
		return d, err
	}
	u := user(s.policy.Name, cp.Name)

	iv, err := intervalFor(cp.Spec.EvaluationInterval, cp.Status.ComplianceState)
	if err != nil {
		r.templateError(s, &d, err)
		return d, nil
	}
	last, _ := time.Parse(time.RFC3339, cp.Status.LastEvaluated)
	// A template that waits for a deletion is evaluated on every event of
	// the watch of what it waits for, whatever its interval.
	if due, wait := iv.due(s.now, last, cp.Status.LastEvaluatedGeneration, cp.Generation); !due && !waitingDeletion(cp) {
		s.requeueAfter(wait)
		if d.ComplianceState == "" {
			// The hub lost what was reported: say it again.
			s.record(&d, cp.Status.ComplianceState, statusMessage(cp), d.Results)
		}
		return d, nil
	}

	// A template evaluated on an interval reads the spoke directly; one
	// driven by change reads through watches, which then tell of changes.
	var reader engine.Reader = &engine.ClusterReader{Client: r.spoke.dynamic, Mapper: r.spoke.mapper}
	var watched *watchReader
	if iv.watch {
		watched = r.watches.reader(r.spoke.mapper, u)
		reader = watched
	}
	res := engine.Evaluate(ctx, cp, reader)
	if res.Enforce {
		if err := r.enforce(ctx, res); err != nil {
			return d, err
		}
	}
	next, err := intervalFor(cp.Spec.EvaluationInterval, res.Compliance())
	waiting := res.Waiting()
	switch {
	case len(waiting) > 0 && !next.watch:
		// Watch what the deletions wait for, so that the template is
		// evaluated again as soon as they are gone, not an interval later.
		if watched == nil {
			watched = r.watches.reader(r.spoke.mapper, u)
		}
		for _, w := range waiting {
			if _, werr := watched.Get(ctx, w.Mapping, w.Namespace, w.Name); werr != nil {
				klog.FromContext(ctx).Info("Cannot watch an object whose deletion the policy waits for", "object", klog.KRef(w.Namespace, w.Name), "reason", werr.Error())
			}
		}
		r.watches.track(u, watched.used)
		s.requeueAfter(next.every)
	case err != nil:
	case next.watch && watched != nil:
		r.watches.track(u, watched.used)
	case next.watch:
		// The new state is watched, and nothing watches yet: evaluate
		// again at once, through watches.
		r.watches.track(u, nil)
		s.requeueAfter(time.Millisecond)
	default:
		r.watches.track(u, nil)
		s.requeueAfter(next.every)
	}
	if err := r.writeTemplateStatus(ctx, cp, res, s.now); err != nil {
		return d, err
	}
	klog.FromContext(ctx).V(2).Info("Evaluated the policy template", "template", cp.Name, "compliant", res.Compliance())
	s.record(&d, res.Compliance(), res.Message(), res.Results(0))
	return d, nil
}

// waitingDeletion says whether cp's last evaluation waits for the
// deletion of an object.
func waitingDeletion(cp *policyv1.ConfigurationPolicy) bool {
	for _, ro := range cp.Status.RelatedObjects {
		if ro.Reason == engine.ReasonDeletePending {
			return true
		}
	}
	return false
}

// templateError reports a policy template that cannot be evaluated.
func (r *reconciler) templateError(s *scope, d *policyv1.DetailsPerTemplate, err error) {
	s.record(d, policyv1.NonCompliant, engine.TemplateErrorMessage(err), engine.TemplateErrorResults(err))
}

// previousDetail is the details entry last reported for t: the one of the
// same name (template-<index> for a template without a name).
func previousDetail(p *policyv1.Policy, t engine.PolicyTemplate) policyv1.DetailsPerTemplate {
	for _, d := range p.Status.Details {
		if d.TemplateMeta.Name == t.DisplayName() {
			return *d.DeepCopy()
		}
	}
	return policyv1.DetailsPerTemplate{}
}

// statusMessage is the compliance message of a ConfigurationPolicy's
// status, as OCM forms it from compliancyDetails, cut to
// policytemplate.MessageLimit.
func statusMessage(cp *policyv1.ConfigurationPolicy) string {
	msg := string(cp.Status.ComplianceState)
	for _, d := range cp.Status.CompliancyDetails {
		msg += "; "
		for i, c := range d.Conditions {
			if i > 0 {
				msg += ", "
			}
			msg += c.Type + " - " + c.Message
		}
	}
	return policytemplate.Cap(msg, policytemplate.MessageLimit, engine.WholeInResults)
}

func metaTime(t time.Time) metav1.Time { return metav1.NewTime(t.Truncate(time.Second)) }
