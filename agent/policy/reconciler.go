package policy

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
	"github.com/flotilla-io/flotilla/internal/reconcile"
)

// reconciler evaluates one hub session's replicated policies.
type reconciler struct {
	*Agent
	// hub reads Policies from the cache and writes their status. The
	// cache may not hold the agent's own last status write yet, and a
	// status computed from a stale copy would lose history: written tells
	// such a copy, which is looked at again shortly.
	hub     client.Client
	written reconcile.Written
	// events writes the compliance events, in the cluster's namespace.
	events  corev1client.EventsGetter
	watches *registry
	// gatekeeper says that the spoke may hold Gatekeeper objects of
	// policies: pruning looks for them.
	gatekeeper atomic.Bool
}

// scope is one reconcile of one policy.
type scope struct {
	policy *policyv1.Policy
	// details are the policy's status.details as this pass reports them.
	details []policyv1.DetailsPerTemplate
	// keep are the spoke ConfigurationPolicies the policy still has.
	keep map[string]bool
	// keepOther are its templates of other kinds, by otherKey.
	keepOther map[string]bool
	// ignored are the indexes in details of Pending templates that
	// ignorePending leaves out of the policy's compliance.
	ignored map[int]bool
	// requeue is when to look at the policy again at the latest.
	requeue time.Duration
	// events are emitted once the status that they describe is written.
	events []policyEvent
	now    time.Time
}

// policyEvent is an event about the policy, for the hub.
type policyEvent struct{ name, eventType, reason, note string }

// requeueAfter makes the policy be looked at again within d.
func (s *scope) requeueAfter(d time.Duration) {
	if d > 0 && (s.requeue == 0 || d < s.requeue) {
		s.requeue = d
	}
}

// Reconcile evaluates one replicated policy on the spoke and reports its
// compliance: get the policy (a policy that is gone, being deleted or
// disabled has its templates removed and pruned) → one status patch at
// the end, only when the status changed → phases: evaluate each template,
// prune the templates the policy no longer has, report.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, err error) {
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("policy", req.Name))
	p := &policyv1.Policy{}
	if err := r.hub.Get(ctx, req.NamespacedName, p); err != nil {
		if apierrors.IsNotFound(err) {
			r.written.Forget(req.NamespacedName)
			return ctrl.Result{}, r.removePolicy(ctx, req.Name)
		}
		return ctrl.Result{}, err
	}
	if r.written.Stale(p) {
		return ctrl.Result{RequeueAfter: reconcile.StaleRequeue}, nil
	}
	if !p.DeletionTimestamp.IsZero() || p.Spec.Disabled {
		return ctrl.Result{}, r.removePolicy(ctx, p.Name)
	}

	s := &scope{policy: p, keep: map[string]bool{}, keepOther: map[string]bool{}, ignored: map[int]bool{}, now: time.Now()}
	before := p.DeepCopy()
	defer func() {
		perr := r.patchStatus(ctx, before, s.policy)
		r.written.Record(s.policy)
		if perr != nil {
			err = errors.Join(err, perr)
			return
		}
		r.emit(ctx, s)
	}()
	// Every phase runs: a template that fails keeps its last status, and
	// the others still report.
	var errs []error
	for _, phase := range []func(context.Context, *scope) error{r.evaluateTemplates, r.pruneTemplates, r.report} {
		errs = append(errs, phase(ctx, s))
	}
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: s.requeue}, nil
}

// evaluateTemplates evaluates every policy template. A template that
// fails for a reason that may pass (the spoke is unreachable) keeps its
// last reported status, and the policy is tried again.
func (r *reconciler) evaluateTemplates(ctx context.Context, s *scope) error {
	var errs []error
	for _, t := range engine.PolicyTemplates(s.policy) {
		d, err := r.template(ctx, s, t)
		if err != nil {
			errs = append(errs, fmt.Errorf("policy template %d (%s): %w", t.Index, t.Name, err))
		}
		s.details = append(s.details, d)
	}
	return errors.Join(errs...)
}

// pruneTemplates removes the spoke ConfigurationPolicies of templates the
// policy no longer has.
func (r *reconciler) pruneTemplates(ctx context.Context, s *scope) error {
	cps, err := r.spokeTemplates(ctx, s.policy.Name)
	if err != nil {
		return err
	}
	var errs []error
	for i := range cps {
		if !s.keep[cps[i].Name] {
			errs = append(errs, r.removeTemplate(ctx, &cps[i]))
		}
	}
	errs = append(errs, r.pruneOtherKinds(ctx, s.policy.Name, s.keepOther))
	return errors.Join(errs...)
}

// report sets the policy's status from its templates: their details, and
// the compliance they roll up to.
func (r *reconciler) report(_ context.Context, s *scope) error {
	states := make([]policyv1.ComplianceState, 0, len(s.details))
	for i, d := range s.details {
		if !s.ignored[i] {
			states = append(states, d.ComplianceState)
		}
	}
	s.policy.Status.Details = s.details
	s.policy.Status.ComplianceState = engine.Rollup(states...)
	return nil
}

// patchStatus writes the status when it changed, and only then. The agent
// is the only writer of a replicated policy's status.
func (r *reconciler) patchStatus(ctx context.Context, before, p *policyv1.Policy) error {
	if equality.Semantic.DeepEqual(before.Status, p.Status) {
		return nil
	}
	if err := r.hub.Status().Patch(ctx, p, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("update the status of Policy %s: %w", klog.KObj(p), err)
	}
	klog.FromContext(ctx).V(1).Info("Updated the policy status", "compliant", p.Status.ComplianceState)
	return nil
}

// emit sends the pass's events, once their status is written: each an
// Event in the cluster's namespace about the replicated policy, named as
// its history entry's eventName says, as OCM's framework names them.
func (r *reconciler) emit(ctx context.Context, s *scope) {
	for _, e := range s.events {
		ev := &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: e.name, Namespace: s.policy.Namespace},
			InvolvedObject: corev1.ObjectReference{
				APIVersion: policyv1.GroupVersion.String(), Kind: policyv1.PolicyKind,
				Namespace: s.policy.Namespace, Name: s.policy.Name, UID: s.policy.UID,
			},
			// The API server refuses an Event with an eventTime whose message is
			// longer: this one has none, and keeps within the limit all the same.
			Reason: e.reason, Message: policytemplate.Cap(e.note, policytemplate.MessageLimit, engine.WholeInResults), Type: e.eventType,
			Source:         corev1.EventSource{Component: eventComponent, Host: r.cfg.ClusterName},
			FirstTimestamp: metav1.NewTime(s.now), LastTimestamp: metav1.NewTime(s.now), Count: 1,
			Action: "Evaluate", ReportingController: eventComponent, ReportingInstance: r.cfg.ClusterName,
		}
		if _, err := r.events.Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			klog.FromContext(ctx).Info("Cannot record a compliance event on the hub", "event", e.name, "reason", err.Error())
		}
	}
}

// eventComponent reports the agent's compliance events.
const eventComponent = "flotilla-policy-agent"

// record reports an evaluation of template d: its compliance, its
// message in history (only when it changed, with an event named as the
// history entry's eventName) and its results.
func (s *scope) record(d *policyv1.DetailsPerTemplate, state policyv1.ComplianceState, msg string, results *policyv1.TemplateResults) {
	d.ComplianceState = state
	d.Results = results
	var changed bool
	if d.History, changed = engine.RecordHistory(d.History, msg, metaTime(s.now)); changed {
		eventType := corev1.EventTypeNormal
		if state != policyv1.Compliant {
			eventType = corev1.EventTypeWarning
		}
		// OCM's name: <policy>.<timestamp in hex nanoseconds>, one
		// nanosecond apart for the templates of one pass.
		name := fmt.Sprintf("%s.%x", s.policy.Name, s.now.UnixNano()+int64(len(s.events)))
		d.History[0].EventName = name
		// OCM's reason names the template as "policy: <cluster namespace>/<name>".
		s.events = append(s.events, policyEvent{name: name, eventType: eventType, reason: "policy: " + s.policy.Namespace + "/" + d.TemplateMeta.Name, note: msg})
	}
}
