package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	"github.com/flotilla-io/flotilla/agent/registration"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// What the hollow agent writes: its ManagedCluster's status, looked at
// every lease period as its watch last saw it, and on the events of its
// watches of ManifestWorks and Policies, where each handler
// decodes the whole object only when the agent acts on it; it patches as
// the agent does, with client.MergeFrom's patches.

// onCluster keeps the ManagedCluster as its watch sees it, and starts the
// status checks when it first sees it, as the agent's status controller
// is woken by its watch. (The agent is also woken by a new lease
// duration, which the benchmark never sets.)
func (a *hollowAgent) onCluster(ctx context.Context, ev watch.EventType, _ *hollowMeta, raw json.RawMessage) {
	if ev == watch.Deleted {
		a.cluster.Store(nil)
		return
	}
	mc := &clusterv1.ManagedCluster{}
	if err := json.Unmarshal(raw, mc); err != nil {
		a.sh.failed("decode managedclusters", err)
		return
	}
	mc.ManagedFields = nil
	if a.cluster.Swap(mc) == nil {
		a.status.start(ctx, a.checkCluster)
	}
}

func (a *hollowAgent) onWork(ctx context.Context, ev watch.EventType, m *hollowMeta, raw json.RawMessage) {
	if ev == watch.Deleted {
		delete(a.reported, m.Name)
		return
	}
	if g, ok := a.reported[m.Name]; ok && g == m.Generation && m.DeletionTimestamp == nil {
		return
	}
	mw := &workv1.ManifestWork{}
	if err := json.Unmarshal(raw, mw); err != nil {
		a.sh.failed("decode manifestworks", err)
		return
	}
	a.work(ctx, mw)
}

func (a *hollowAgent) onPolicy(ctx context.Context, ev watch.EventType, m *hollowMeta, raw json.RawMessage) {
	if ev == watch.Deleted {
		delete(a.evaluated, m.Name)
		return
	}
	if g, ok := a.evaluated[m.Name]; ok && g == m.Generation && m.DeletionTimestamp == nil {
		return
	}
	p := &policyv1.Policy{}
	if err := json.Unmarshal(raw, p); err != nil {
		a.sh.failed("decode policies", err)
		return
	}
	a.policy(ctx, p)
}

// patch sends the merge patch from before to obj (with obj's
// resourceVersion when opts say so) to path, and decodes the hub's
// answer into into when it is not nil.
func (a *hollowAgent) patch(ctx context.Context, path string, before, obj client.Object, into any, opts ...client.MergeFromOption) error {
	data, err := client.MergeFromWithOptions(before, opts...).Data(obj)
	if err != nil {
		return err
	}
	return a.hub.mergePatch(ctx, path, data, into)
}

// hollowStatus is the schedule of a hollow agent's status checks, and
// what the last check found, touched by the check only.
type hollowStatus struct {
	hollowTimer
	// conflicted says the last status patch met a newer ManagedCluster:
	// the next read goes past the watch cache.
	conflicted bool
	failures   int
}

// checkCluster is the agent's ManagedCluster status controller: it takes
// the cluster as its watch last saw it (reads it from etcd after a
// conflict, or when the watch holds none), records the agent's id on it,
// and writes the status of a healthy cluster when it differs. It returns
// when to check again: a lease period later, 100 ms after a conflict,
// sooner after a failure.
func (a *hollowAgent) checkCluster(ctx context.Context) time.Duration {
	var err error
	a.sh.workers.run(func() { err = a.clusterStatus(ctx) })
	st := &a.status
	st.conflicted = apierrors.IsConflict(err)
	switch {
	case err == nil:
		st.failures = 0
		return a.leasePeriod()
	case st.conflicted:
		return 100 * time.Millisecond
	}
	if ctx.Err() == nil {
		a.sh.failed("managedclusters", err)
	}
	st.failures++
	return min(a.leasePeriod(), 100*time.Millisecond<<min(st.failures, 10))
}

// clusterStatus reads the ManagedCluster and writes its status as the
// agent's status controller does for a healthy cluster, when it differs.
func (a *hollowAgent) clusterStatus(ctx context.Context) error {
	path := hubPath(clusterv1.GroupVersion, "", "managedclusters", a.name, "")
	mc := a.cluster.Load()
	if mc == nil || a.status.conflicted {
		mc = &clusterv1.ManagedCluster{}
		if err := a.hub.get(ctx, path, nil, mc); err != nil {
			return err
		}
	} else {
		mc = mc.DeepCopy()
	}
	a.leaseSeconds.Store(mc.Spec.LeaseDurationSeconds)
	if mc.Annotations[registration.AgentIDAnnotation] != a.id {
		before := mc.DeepCopy()
		if mc.Annotations == nil {
			mc.Annotations = map[string]string{}
		}
		mc.Annotations[registration.AgentIDAnnotation] = a.id
		patched := &clusterv1.ManagedCluster{}
		if err := a.patch(ctx, path, before, mc, patched); err != nil {
			return err
		}
		mc = patched
	}
	desired := mc.DeepCopy()
	registration.SetHealthyStatus(desired, a.clusterID, a.sh.version, nil)
	if equality.Semantic.DeepEqual(mc.Status, desired.Status) {
		return nil
	}
	return a.patch(ctx, hubPath(clusterv1.GroupVersion, "", "managedclusters", mc.Name, "status"), mc, desired, nil,
		client.MergeFromWithOptimisticLock{})
}

// work adds the agent's finalizer to a ManifestWork and writes its
// status as the work agent does once its manifests are applied, or
// removes the finalizer from one being deleted, as the agent does once it
// deleted what it applied.
func (a *hollowAgent) work(ctx context.Context, mw *workv1.ManifestWork) {
	path := hubPath(workv1.GroupVersion, mw.Namespace, "manifestworks", mw.Name, "")
	for attempt := 0; ; attempt++ {
		err := a.workOnce(ctx, path, mw)
		if err == nil {
			return
		}
		a.sh.failed("manifestworks", err)
		if !retry(ctx, attempt) {
			return
		}
		mw = &workv1.ManifestWork{}
		if err := a.hub.get(ctx, path, nil, mw); err != nil {
			return
		}
	}
}

func (a *hollowAgent) workOnce(ctx context.Context, path string, mw *workv1.ManifestWork) error {
	if !mw.DeletionTimestamp.IsZero() {
		delete(a.reported, mw.Name)
		if !controllerutil.ContainsFinalizer(mw, workv1.ManifestWorkFinalizer) {
			return nil
		}
		before := mw.DeepCopy()
		controllerutil.RemoveFinalizer(mw, workv1.ManifestWorkFinalizer)
		return ignoreNotFound(a.patch(ctx, path, before, mw, nil, client.MergeFromWithOptimisticLock{}))
	}
	if g, ok := a.reported[mw.Name]; ok && g == mw.Generation {
		return nil
	}
	if !controllerutil.ContainsFinalizer(mw, workv1.ManifestWorkFinalizer) {
		before := mw.DeepCopy()
		controllerutil.AddFinalizer(mw, workv1.ManifestWorkFinalizer)
		patched := &workv1.ManifestWork{}
		if err := a.patch(ctx, path, before, mw, patched, client.MergeFromWithOptimisticLock{}); err != nil {
			return ignoreNotFound(err)
		}
		*mw = *patched
	}
	before := mw.DeepCopy()
	a.sh.works.SetStatus(mw, time.Now())
	reportRolledOut(mw)
	reportNeverReady(mw)
	if !equality.Semantic.DeepEqual(before.Status, mw.Status) {
		if err := a.patch(ctx, path+"/status", before, mw, nil); err != nil {
			return ignoreNotFound(err)
		}
	}
	a.reported[mw.Name] = mw.Generation
	return nil
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// complianceEvent is a compliance event for the hub, as the policy agent
// writes one per history entry.
type complianceEvent struct{ name, eventType, reason, note string }

// policy evaluates a replicated Policy against the simulated cluster's
// objects (what its enforced policies created) with the agent's engine,
// and writes its status and compliance events as the policy agent does.
func (a *hollowAgent) policy(ctx context.Context, p *policyv1.Policy) {
	if !p.DeletionTimestamp.IsZero() || p.Spec.Disabled {
		delete(a.evaluated, p.Name)
		return
	}
	if g, ok := a.evaluated[p.Name]; ok && g == p.Generation {
		return
	}
	// As the policy agent since it reads its cache: the watch's copy. It
	// holds this agent's last status write, as a policy is evaluated once
	// per generation here.
	path := hubPath(policyv1.GroupVersion, p.Namespace, "policies", p.Name, "")
	now := time.Now()
	before := p.DeepCopy()
	var (
		details []policyv1.DetailsPerTemplate
		states  []policyv1.ComplianceState
		events  []complianceEvent
	)
	for _, t := range engine.PolicyTemplates(p) {
		d, ev := a.evaluateTemplate(ctx, p, t, now, len(events))
		if ev != nil {
			events = append(events, *ev)
		}
		details = append(details, d)
		states = append(states, d.ComplianceState)
	}
	p.Status.Details = details
	p.Status.ComplianceState = engine.Rollup(states...)
	if !equality.Semantic.DeepEqual(before.Status, p.Status) {
		if err := a.patch(ctx, path+"/status", before, p, nil); err != nil {
			if !apierrors.IsNotFound(err) {
				a.sh.failed("patch policies/status", err)
			}
			return
		}
	}
	a.evaluated[p.Name] = p.Generation
	for _, e := range events {
		a.createEvent(ctx, p, e, now)
	}
}

// evaluateTemplate evaluates template t of p (enforcing what it says to
// enforce) into its status details, from its details before; when its
// history changed, it returns the compliance event to write, named after
// the events before it, of which there are seq.
func (a *hollowAgent) evaluateTemplate(ctx context.Context, p *policyv1.Policy, t engine.PolicyTemplate, now time.Time, seq int) (policyv1.DetailsPerTemplate, *complianceEvent) {
	d := policyv1.DetailsPerTemplate{}
	for _, prev := range p.Status.Details {
		if prev.TemplateMeta.Name == t.DisplayName() {
			d = *prev.DeepCopy()
		}
	}
	d.TemplateMeta = metav1.ObjectMeta{Name: t.DisplayName()}
	var msg string
	if t.Err != nil {
		d.ComplianceState, msg = policyv1.NonCompliant, engine.TemplateErrorMessage(t.Err)
		d.Results = &policyv1.TemplateResults{Errors: []policyv1.TemplateError{{ObjectTemplate: -1, Reason: "template-error", Message: t.Err.Error()}}}
	} else {
		res := engine.Evaluate(ctx, t.ConfigurationPolicy, a)
		if res.Enforce {
			for _, act := range res.Actions {
				res.Done(act, a.enforce(act), nil)
			}
		}
		d.ComplianceState, msg, d.Results = res.Compliance(), res.Message(), res.Results(0)
	}
	var changed bool
	if d.History, changed = engine.RecordHistory(d.History, msg, metav1.NewTime(now)); !changed {
		return d, nil
	}
	eventType := corev1.EventTypeNormal
	if d.ComplianceState != policyv1.Compliant {
		eventType = corev1.EventTypeWarning
	}
	// Named as the policy agent names them (OCM's form).
	name := fmt.Sprintf("%s.%x", p.Name, now.UnixNano()+int64(seq))
	d.History[0].EventName = name
	return d, &complianceEvent{name: name, eventType: eventType, reason: "policy: " + p.Namespace + "/" + d.TemplateMeta.Name, note: msg}
}

// createEvent writes compliance event e of p to the hub, as the policy
// agent does.
func (a *hollowAgent) createEvent(ctx context.Context, p *policyv1.Policy, e complianceEvent, now time.Time) {
	ev := &corev1.Event{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta: metav1.ObjectMeta{Name: e.name, Namespace: p.Namespace},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: policyv1.GroupVersion.String(), Kind: policyv1.PolicyKind,
			Namespace: p.Namespace, Name: p.Name, UID: p.UID,
		},
		Reason: e.reason, Message: e.note, Type: e.eventType,
		Source:         corev1.EventSource{Component: "flotilla-policy-agent", Host: a.name},
		FirstTimestamp: metav1.NewTime(now), LastTimestamp: metav1.NewTime(now), Count: 1,
		Action: "Evaluate", ReportingController: "flotilla-policy-agent", ReportingInstance: a.name,
	}
	if err := a.hub.create(ctx, hubPath(corev1.SchemeGroupVersion, p.Namespace, "events", "", ""), ev, nil); err != nil && !apierrors.IsAlreadyExists(err) {
		a.sh.failed("create events", err)
	}
}

// The simulated cluster as the policy engine reads it (engine.Reader):
// the built-in and OCM kinds, and the objects enforced policies created.

func objectKey(resource, namespace, name string) string {
	return resource + "/" + namespace + "/" + name
}

func (a *hollowAgent) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	return a.sh.kinds.Mapping(gvk)
}

func (a *hollowAgent) Get(_ context.Context, m *meta.RESTMapping, namespace, name string) (*unstructured.Unstructured, error) {
	if o := a.objects[objectKey(m.Resource.Resource, namespace, name)]; o != nil {
		return o.DeepCopy(), nil
	}
	return nil, nil
}

func (a *hollowAgent) List(_ context.Context, m *meta.RESTMapping, namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for key, o := range a.objects {
		if !strings.HasPrefix(key, m.Resource.Resource+"/") || (namespace != "" && o.GetNamespace() != namespace) {
			continue
		}
		if selector == nil || selector.Matches(labels.Set(o.GetLabels())) {
			out = append(out, o.DeepCopy())
		}
	}
	return out, nil
}

// enforce carries out an enforced policy's action on the simulated
// cluster and returns the object after it, as the API server would.
func (a *hollowAgent) enforce(act *engine.Action) *unstructured.Unstructured {
	key := objectKey(act.Mapping.Resource.Resource, act.Object.GetNamespace(), act.Object.GetName())
	if act.Type == engine.ActionDelete {
		delete(a.objects, key)
		return nil
	}
	o := act.Object.DeepCopy()
	if o.GetUID() == "" {
		o.SetUID(types.UID(uuid.NewUUID()))
		o.SetCreationTimestamp(metav1.Now())
	}
	a.objects[key] = o
	return o.DeepCopy()
}

var _ engine.Reader = &hollowAgent{}
