package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	certificatesclient "k8s.io/client-go/kubernetes/typed/certificates/v1"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	"github.com/flotilla-io/flotilla/agent/registration"
	"github.com/flotilla-io/flotilla/agent/work"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/hub"
)

var fleetMode = flag.String("fleet-mode", "real", "fleet: how each simulated cluster runs: real (the agent's code, applying into a shared spoke) "+
	"or hollow (only what the hub sees: its own key, CSR, certificate and connection, lease, ManagedCluster status, "+
	"watches of its ManifestWorks and Policies and their status, computed without a spoke)")

// hollow says whether the fleet's clusters are hollow agents.
func hollow() bool { return *fleetMode == "hollow" }

func checkFleetMode() error {
	if *fleetMode != "real" && *fleetMode != "hollow" {
		return fmt.Errorf("-fleet-mode %q: want real or hollow", *fleetMode)
	}
	return nil
}

// hollowShared is what the hollow agents share, as the agents of one
// process would: the hub's REST mapper (discovery is the same for all),
// the kinds a managed cluster serves, the work status simulator, and the
// Kubernetes version every simulated cluster reports.
type hollowShared struct {
	bootstrap *rest.Config
	mapper    meta.RESTMapper
	kinds     *engine.ObjectSet
	works     *work.Simulator
	version   string
	// errors counts the hub requests that failed, by what; first keeps
	// the first error of each, to print.
	mu     sync.Mutex
	errors map[string]int
	first  map[string]string
}

// kindMapper resolves kinds with the ObjectSet's kinds: the built-in and
// OCM kinds, as a managed cluster serves them. Only RESTMapping is used.
type kindMapper struct {
	meta.RESTMapper
	kinds *engine.ObjectSet
}

func (m kindMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	v := ""
	if len(versions) > 0 {
		v = versions[0]
	}
	return m.kinds.Mapping(gk.WithVersion(v))
}

// startHollowAgents runs one hollow agent per name in this process, each
// with its own key, CSR and client certificate and its own HTTP/2
// connection to the hub. admin reads the hub's discovery once for all.
// The returned function stops them all, waits until they have, and
// prints the hub requests that failed.
func startHollowAgents(ctx context.Context, names []string, bootstrap string, admin *rest.Config) (stop func(), err error) {
	sh := &hollowShared{errors: map[string]int{}, first: map[string]string{}}
	if sh.bootstrap, err = clientcmd.BuildConfigFromFlags("", bootstrap); err != nil {
		return nil, err
	}
	adminHTTP, err := rest.HTTPClientFor(admin)
	if err != nil {
		return nil, err
	}
	if sh.mapper, err = apiutil.NewDynamicRESTMapper(admin, adminHTTP); err != nil {
		return nil, err
	}
	// Every simulated cluster is an API server of the hub's build, as the
	// shared spokes of the real mode are.
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(admin, adminHTTP)
	if err != nil {
		return nil, err
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("read the hub's version: %w", err)
	}
	sh.version = v.GitVersion
	sh.kinds = engine.NewObjectSet(nil)
	sh.works = work.NewSimulator(kindMapper{kinds: sh.kinds})

	agentCtx, cancel := context.WithCancel(ctx)
	var agents sync.WaitGroup
	for _, name := range names {
		a := &hollowAgent{sh: sh, name: name, id: utilrand.String(10), clusterID: string(uuid.NewUUID()),
			reported: map[string]int64{}, evaluated: map[string]int64{}, objects: map[string]*unstructured.Unstructured{}}
		agents.Go(func() { a.run(agentCtx) })
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			agents.Wait()
			sh.printErrors()
		})
	}, nil
}

// failed counts a failed hub request of what.
func (sh *hollowShared) failed(what string, err error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.errors[what]++; sh.errors[what] == 1 {
		sh.first[what] = err.Error()
	}
}

func (sh *hollowShared) printErrors() {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for what, n := range sh.errors {
		fmt.Printf("      hollow agents: %d failed requests to %s (retried; first: %s)\n", n, what, sh.first[what])
	}
}

// hollowAgent is one simulated cluster as the hub sees it.
type hollowAgent struct {
	sh                  *hollowShared
	name, id, clusterID string
	hub                 client.WithWatch
	leases              coordinationclient.LeaseInterface
	events              corev1client.EventInterface
	leaseSeconds        atomic.Int32
	// reported maps a ManifestWork to the generation whose status it
	// wrote; evaluated, a Policy to the generation it evaluated. Each is
	// touched by its watch's goroutine only.
	reported, evaluated map[string]int64
	// objects are what enforced policies created on the simulated
	// cluster, by "resource/namespace/name": all it holds.
	objects map[string]*unstructured.Unstructured
}

func (a *hollowAgent) run(ctx context.Context) {
	cfg, err := a.join(ctx)
	if err != nil {
		return
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		a.sh.failed("build the hub client", err)
		return
	}
	defer httpClient.CloseIdleConnections()
	if a.hub, err = client.NewWithWatch(cfg, client.Options{HTTPClient: httpClient, Scheme: hub.Scheme(), Mapper: a.sh.mapper}); err != nil {
		a.sh.failed("build the hub client", err)
		return
	}
	coord, err := coordinationclient.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		a.sh.failed("build the hub client", err)
		return
	}
	a.leases = coord.Leases(a.name)
	core, err := corev1client.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		a.sh.failed("build the hub client", err)
		return
	}
	a.events = core.Events(a.name)
	if err := a.waitAccepted(ctx); err != nil {
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { a.renewLease(ctx) })
	wg.Go(func() {
		a.follow(ctx, "managedclusters", &clusterv1.ManagedClusterList{},
			[]client.ListOption{client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", a.name)}},
			func(ctx context.Context, ev watch.EventType, o client.Object) {
				if ev != watch.Deleted {
					a.clusterStatus(ctx, o.(*clusterv1.ManagedCluster))
				}
			})
	})
	wg.Go(func() {
		a.follow(ctx, "manifestworks", &workv1.ManifestWorkList{}, []client.ListOption{client.InNamespace(a.name)},
			func(ctx context.Context, ev watch.EventType, o client.Object) {
				mw := o.(*workv1.ManifestWork)
				if ev == watch.Deleted {
					delete(a.reported, mw.Name)
					return
				}
				a.work(ctx, mw)
			})
	})
	wg.Go(func() {
		a.follow(ctx, "policies", &policyv1.PolicyList{}, []client.ListOption{client.InNamespace(a.name)},
			func(ctx context.Context, ev watch.EventType, o client.Object) {
				p := o.(*policyv1.Policy)
				if ev == watch.Deleted {
					delete(a.evaluated, p.Name)
					return
				}
				a.policy(ctx, p)
			})
	})
	wg.Wait()
}

// retry waits before the attempt after attempt n, up to 10 s; false when
// ctx ended.
func retry(ctx context.Context, n int) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(min(10*time.Second, 100*time.Millisecond<<min(n, 7))):
		return true
	}
}

// join creates the ManagedCluster and a CSR with the bootstrap token as
// the agent does, waits until the CSR is issued, and returns the
// configuration of the agent's own certificate.
func (a *hollowAgent) join(ctx context.Context) (*rest.Config, error) {
	boot := rest.CopyConfig(a.sh.bootstrap)
	httpClient, err := rest.HTTPClientFor(boot)
	if err != nil {
		return nil, err
	}
	// The bootstrap connection is the agent's until it joined.
	defer httpClient.CloseIdleConnections()
	c, err := client.New(boot, client.Options{HTTPClient: httpClient, Scheme: hub.Scheme(), Mapper: a.sh.mapper})
	if err != nil {
		return nil, err
	}
	certs, err := certificatesclient.NewForConfigAndClient(boot, httpClient)
	if err != nil {
		return nil, err
	}
	csrs := certs.CertificateSigningRequests()
	for attempt := 0; ; attempt++ {
		certPEM, keyPEM, err := a.joinOnce(ctx, c, csrs)
		if err == nil {
			cfg := rest.CopyConfig(a.sh.bootstrap)
			cfg.BearerToken, cfg.BearerTokenFile = "", ""
			cfg.CertData, cfg.KeyData = certPEM, keyPEM
			cfg.QPS, cfg.Burst = 20, 50
			if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
				return nil, fmt.Errorf("the issued certificate does not match the key: %w", err)
			}
			return cfg, nil
		}
		a.sh.failed("join", err)
		if !retry(ctx, attempt) {
			return nil, ctx.Err()
		}
	}
}

func (a *hollowAgent) joinOnce(ctx context.Context, c client.Client, csrs certificatesclient.CertificateSigningRequestInterface) (certPEM, keyPEM []byte, err error) {
	mc := &clusterv1.ManagedCluster{}
	err = c.Get(ctx, client.ObjectKey{Name: a.name}, mc)
	if apierrors.IsNotFound(err) {
		mc = registration.NewManagedCluster(a.name, a.clusterID, a.id,
			clusterv1.ClientConfig{URL: "https://" + a.name + ".hollow.invalid:6443"}, 0)
		if err = c.Create(ctx, mc); apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		return nil, nil, err
	}
	sel := labels.Set{clusterv1.ClusterNameLabel: a.name}.String()
	if _, err := csrs.List(ctx, metav1.ListOptions{LabelSelector: sel}); err != nil {
		return nil, nil, err
	}
	keyPEM, csr, err := registration.NewCSR(a.name, a.id, 0)
	if err != nil {
		return nil, nil, err
	}
	created, err := csrs.Create(ctx, csr, metav1.CreateOptions{})
	if err != nil {
		return nil, nil, err
	}
	opts := metav1.ListOptions{LabelSelector: sel, FieldSelector: fields.OneTermEqualSelector("metadata.name", created.Name).String()}
	for {
		list, err := csrs.List(ctx, opts)
		if err != nil {
			return nil, nil, err
		}
		if len(list.Items) == 0 {
			return nil, nil, fmt.Errorf("CSR %s is gone", created.Name)
		}
		if cert := list.Items[0].Status.Certificate; len(cert) > 0 {
			return cert, keyPEM, nil
		}
		w, err := csrs.Watch(ctx, metav1.ListOptions{LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector, ResourceVersion: list.ResourceVersion})
		if err != nil {
			return nil, nil, err
		}
		for ev := range w.ResultChan() {
			if got, ok := ev.Object.(*certificatesv1.CertificateSigningRequest); ok && len(got.Status.Certificate) > 0 {
				w.Stop()
				return got.Status.Certificate, keyPEM, nil
			}
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
	}
}

// waitAccepted reads the ManagedCluster with the agent's certificate
// until the hub lets it, as the agent does once it holds one.
func (a *hollowAgent) waitAccepted(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		err := a.hub.Get(ctx, client.ObjectKey{Name: a.name}, &clusterv1.ManagedCluster{})
		if err == nil || apierrors.IsNotFound(err) {
			return nil
		}
		if !retry(ctx, attempt) {
			return ctx.Err()
		}
	}
}

// renewLease renews the cluster's Lease every lease period, with the
// requests the agent makes: an update of the lease last written, a read
// only when that conflicts.
func (a *hollowAgent) renewLease(ctx context.Context) {
	var last *coordinationv1.Lease
	failures := 0
	for {
		period := time.Duration(a.leaseSeconds.Load()) * time.Second
		if period <= 0 {
			period = clusterv1.DefaultLeaseDurationSeconds * time.Second
		}
		var err error
		if last, err = a.renewLeaseOnce(ctx, last, period); err != nil && ctx.Err() == nil {
			// As the agent: back off, up to the period, while the hub
			// refuses (its RBAC for the cluster may not exist yet).
			a.sh.failed("leases", err)
			period = min(period, 100*time.Millisecond<<min(failures, 10))
			failures++
		} else {
			failures = 0
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
	}
}

func (a *hollowAgent) renewLeaseOnce(ctx context.Context, last *coordinationv1.Lease, period time.Duration) (*coordinationv1.Lease, error) {
	now := metav1.NowMicro()
	if last != nil {
		lease := last.DeepCopy()
		lease.Spec.RenewTime = &now
		updated, err := a.leases.Update(ctx, lease, metav1.UpdateOptions{})
		if err == nil || (!apierrors.IsConflict(err) && !apierrors.IsNotFound(err)) {
			return updated, err
		}
	}
	lease, err := a.leases.Get(ctx, clusterv1.ManagedClusterLeaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return a.leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: clusterv1.ManagedClusterLeaseName, Namespace: a.name},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(a.name),
				LeaseDurationSeconds: ptr.To(int32(period / time.Second)),
				RenewTime:            &now,
			},
		}, metav1.CreateOptions{})
	}
	if err != nil {
		return nil, err
	}
	lease.Spec.RenewTime = &now
	return a.leases.Update(ctx, lease, metav1.UpdateOptions{})
}

// follow lists what opts select and then watches it from the list's
// resourceVersion, handing each object and event to handle, and lists
// again when the watch cannot continue: an informer without a cache.
func (a *hollowAgent) follow(ctx context.Context, what string, list client.ObjectList, opts []client.ListOption, handle func(context.Context, watch.EventType, client.Object)) {
	for attempt := 0; ctx.Err() == nil; attempt++ {
		if err := a.hub.List(ctx, list, opts...); err != nil {
			if ctx.Err() == nil {
				a.sh.failed("list "+what, err)
			}
			if !retry(ctx, attempt) {
				return
			}
			continue
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			a.sh.failed("list "+what, err)
			return
		}
		for _, o := range items {
			handle(ctx, watch.Added, o.(client.Object))
		}
		rv := list.GetResourceVersion()
		// Only the resourceVersion is needed from here on.
		_ = meta.SetList(list, nil)
		for ctx.Err() == nil {
			w, err := a.hub.Watch(ctx, list, append(opts, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})...)
			if err != nil {
				if ctx.Err() == nil {
					a.sh.failed("watch "+what, err)
				}
				break
			}
			var gone bool
			for ev := range w.ResultChan() {
				o, ok := ev.Object.(client.Object)
				switch {
				case ev.Type == watch.Error:
					gone = true
				case !ok:
				case ev.Type == watch.Bookmark:
					rv = o.GetResourceVersion()
				default:
					rv = o.GetResourceVersion()
					handle(ctx, ev.Type, o)
				}
				if gone {
					w.Stop()
				}
			}
			if gone {
				break
			}
		}
		attempt = 0
	}
}

// clusterStatus writes the ManagedCluster's status as the agent's status
// controller does for a healthy cluster, when it differs.
func (a *hollowAgent) clusterStatus(ctx context.Context, mc *clusterv1.ManagedCluster) {
	a.leaseSeconds.Store(mc.Spec.LeaseDurationSeconds)
	if mc.Annotations[registration.AgentIDAnnotation] != a.id {
		before := mc.DeepCopy()
		if mc.Annotations == nil {
			mc.Annotations = map[string]string{}
		}
		mc.Annotations[registration.AgentIDAnnotation] = a.id
		if err := a.hub.Patch(ctx, mc, client.MergeFrom(before)); err != nil {
			a.sh.failed("patch managedclusters", err)
			return
		}
	}
	desired := mc.DeepCopy()
	registration.SetHealthyStatus(desired, a.clusterID, a.sh.version, nil)
	if equality.Semantic.DeepEqual(mc.Status, desired.Status) {
		return
	}
	// A conflict is followed by the watch's newer ManagedCluster.
	if err := a.hub.Status().Patch(ctx, desired, client.MergeFromWithOptions(mc, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsConflict(err) {
		a.sh.failed("patch managedclusters/status", err)
	}
}

// work adds the agent's finalizer to a ManifestWork and writes its
// status as the work agent does once its manifests are applied, or
// removes the finalizer from one being deleted, as the agent does once it
// deleted what it applied.
func (a *hollowAgent) work(ctx context.Context, mw *workv1.ManifestWork) {
	key := client.ObjectKeyFromObject(mw)
	for attempt := 0; ; attempt++ {
		err := a.workOnce(ctx, mw)
		if err == nil {
			return
		}
		a.sh.failed("manifestworks", err)
		if !retry(ctx, attempt) {
			return
		}
		mw = &workv1.ManifestWork{}
		if err := a.hub.Get(ctx, key, mw); err != nil {
			return
		}
	}
}

func (a *hollowAgent) workOnce(ctx context.Context, mw *workv1.ManifestWork) error {
	if !mw.DeletionTimestamp.IsZero() {
		delete(a.reported, mw.Name)
		if !controllerutil.ContainsFinalizer(mw, workv1.ManifestWorkFinalizer) {
			return nil
		}
		before := mw.DeepCopy()
		controllerutil.RemoveFinalizer(mw, workv1.ManifestWorkFinalizer)
		return ignoreNotFound(a.hub.Patch(ctx, mw, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})))
	}
	if g, ok := a.reported[mw.Name]; ok && g == mw.Generation {
		return nil
	}
	if !controllerutil.ContainsFinalizer(mw, workv1.ManifestWorkFinalizer) {
		before := mw.DeepCopy()
		controllerutil.AddFinalizer(mw, workv1.ManifestWorkFinalizer)
		if err := a.hub.Patch(ctx, mw, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return ignoreNotFound(err)
		}
	}
	before := mw.DeepCopy()
	a.sh.works.SetStatus(mw, time.Now())
	if !equality.Semantic.DeepEqual(before.Status, mw.Status) {
		if err := a.hub.Status().Patch(ctx, mw, client.MergeFrom(before)); err != nil {
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

// hollowEvent is a compliance event for the hub, as the policy agent
// writes one per history entry.
type hollowEvent struct{ name, eventType, reason, note string }

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
	// As the policy agent: read the hub itself, not the watch's copy,
	// which may not hold the agent's own last status write yet.
	if err := a.hub.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
		if !apierrors.IsNotFound(err) {
			a.sh.failed("get policies", err)
		}
		return
	}
	now := time.Now()
	before := p.DeepCopy()
	var (
		details []policyv1.DetailsPerTemplate
		states  []policyv1.ComplianceState
		events  []hollowEvent
	)
	for _, t := range engine.PolicyTemplates(p) {
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
		if d.History, changed = engine.RecordHistory(d.History, msg, metav1.NewTime(now)); changed {
			eventType := corev1.EventTypeNormal
			if d.ComplianceState != policyv1.Compliant {
				eventType = corev1.EventTypeWarning
			}
			// Named as the policy agent names them (OCM's form).
			name := fmt.Sprintf("%s.%x", p.Name, now.UnixNano()+int64(len(events)))
			d.History[0].EventName = name
			events = append(events, hollowEvent{name: name, eventType: eventType, reason: "policy: " + p.Namespace + "/" + d.TemplateMeta.Name, note: msg})
		}
		details = append(details, d)
		states = append(states, d.ComplianceState)
	}
	p.Status.Details = details
	p.Status.ComplianceState = engine.Rollup(states...)
	if !equality.Semantic.DeepEqual(before.Status, p.Status) {
		if err := a.hub.Status().Patch(ctx, p, client.MergeFrom(before)); err != nil {
			if !apierrors.IsNotFound(err) {
				a.sh.failed("patch policies/status", err)
			}
			return
		}
	}
	a.evaluated[p.Name] = p.Generation
	for _, e := range events {
		ev := &corev1.Event{
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
		if _, err := a.events.Create(ctx, ev, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			a.sh.failed("create events", err)
		}
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
