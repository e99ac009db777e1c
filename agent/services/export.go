package services

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	mcsv1alpha1 "github.com/flotilla-io/flotilla/api/mcs/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/mcs"
)

const (
	// exportWorkers is how many exported services are published at once.
	exportWorkers = 4
	// exportResync is how often every export is compared with the hub
	// again.
	exportResync = 10 * time.Minute
)

// spokeScheme holds what the agent reads and writes in the cluster.
var spokeScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(s))
	utilruntime.Must(discoveryv1.AddToScheme(s))
	utilruntime.Must(mcsv1beta1.Install(s))
	return s
}()

// hubScheme holds what the agent reads and writes on the hub.
var hubScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clusterv1.AddToScheme(s))
	utilruntime.Must(mcsv1alpha1.AddToScheme(s))
	return s
}()

// exportSpokeMapper maps the export side's spoke kinds without discovery.
func exportSpokeMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for _, gvk := range []string{"Service", "ServiceList"} {
		m.Add(corev1.SchemeGroupVersion.WithKind(gvk), meta.RESTScopeNamespace)
	}
	for _, gvk := range []string{"EndpointSlice", "EndpointSliceList"} {
		m.Add(discoveryv1.SchemeGroupVersion.WithKind(gvk), meta.RESTScopeNamespace)
	}
	for _, gvk := range []string{"ServiceExport", "ServiceExportList"} {
		m.Add(mcsv1beta1.SchemeGroupVersion.WithKind(gvk), meta.RESTScopeNamespace)
	}
	return m
}

// hubMapper maps the agent's hub kinds without discovery.
func hubMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for _, gvk := range []string{"ExportedService", "ExportedServiceList", "ImportedService", "ImportedServiceList"} {
		m.Add(mcsv1alpha1.GroupVersion.WithKind(gvk), meta.RESTScopeNamespace)
	}
	for _, gvk := range []string{"ManagedCluster", "ManagedClusterList"} {
		m.Add(clusterv1.GroupVersion.WithKind(gvk), meta.RESTScopeRoot)
	}
	return m
}

// exportedSlices selects the EndpointSlices the export side reads: those
// of a Service, and not the agent's own for imports.
func exportedSlices() labels.Selector {
	has, _ := labels.NewRequirement(discoveryv1.LabelServiceName, selection.Exists, nil)
	notOurs, _ := labels.NewRequirement(discoveryv1.LabelManagedBy, selection.NotEquals, []string{mcs.ManagedBy})
	return labels.NewSelector().Add(*has, *notOurs)
}

// exporter publishes one cluster's exports to the hub: an ExportedService
// per valid ServiceExport, in the cluster's namespace, and the
// ServiceExports' conditions back in the cluster.
type exporter struct {
	cluster string
	// spoke reads ServiceExports, Services and EndpointSlices from
	// spokeCache and writes ServiceExport status.
	spoke      client.Client
	spokeCache cache.Cache
	// hub reads ExportedServices (in the cluster's namespace) and the
	// cluster's ManagedCluster from hubCache, and writes ExportedServices.
	hub      client.Client
	hubCache cache.Cache
	// sets is the agent's watch of its set's ImportedServices.
	sets *clusterSet
	// queue holds the services to look at again; the zero key stands for
	// every one (the cluster's set changed).
	queue workqueue.TypedRateLimitingInterface[types.NamespacedName]
	// written holds the ExportedService of each service as the agent last
	// wrote it, until the cache has caught up (by generation), so that a
	// quick second change is compared with what the hub has.
	written sync.Map
}

// run publishes the cluster's exports to the hub until ctx ends.
func (e *exporter) run(ctx context.Context, hubHost string) error {
	logger := klog.FromContext(ctx).WithName("export")
	ctx = klog.NewContext(ctx, logger)
	defer e.queue.ShutDown()
	if err := e.watch(ctx); err != nil {
		return err
	}
	go func() {
		if err := e.spokeCache.Start(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "The watch of the cluster's ServiceExports stopped")
		}
	}()
	go func() {
		if err := e.hubCache.Start(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "The watch of the cluster's ExportedServices stopped")
		}
	}()
	if !e.spokeCache.WaitForCacheSync(ctx) || !e.hubCache.WaitForCacheSync(ctx) || !e.sets.waitForSync(ctx) {
		return ctx.Err()
	}
	e.sets.waitForImports(ctx, 10*time.Second)
	// Leftovers: what the hub holds of services the cluster no longer
	// exports (deleted while the agent was away) goes on first sync.
	e.enqueueAll(ctx)
	logger.Info("Exporting services", "hub", hubHost, "namespace", e.cluster)
	for range exportWorkers {
		go func() {
			for e.next(ctx) {
			}
		}()
	}
	go wait.UntilWithContext(ctx, e.enqueueAll, exportResync)
	<-ctx.Done()
	return nil
}

// newExporter returns the export side of the agent, which reads its set's
// ImportedServices from sets.
func (a *Agent) newExporter(hub *rest.Config, sets *clusterSet) (*exporter, error) {
	spokeCfg := rest.CopyConfig(a.cfg.Spoke)
	spokeCache, err := cache.New(spokeCfg, cache.Options{
		Scheme:           spokeScheme,
		Mapper:           exportSpokeMapper(),
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&discoveryv1.EndpointSlice{}: {Label: exportedSlices()},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("create the export side's cache of the managed cluster: %w", err)
	}
	spoke, err := client.New(spokeCfg, client.Options{Scheme: spokeScheme, Mapper: exportSpokeMapper(), Cache: &client.CacheOptions{Reader: spokeCache}})
	if err != nil {
		return nil, fmt.Errorf("create the export side's client of the managed cluster: %w", err)
	}
	hubCfg := rest.CopyConfig(hub)
	hubCache, err := cache.New(hubCfg, cache.Options{
		Scheme:            hubScheme,
		Mapper:            hubMapper(),
		DefaultTransform:  cache.TransformStripManagedFields(),
		DefaultNamespaces: map[string]cache.Config{a.cfg.ClusterName: {}},
	})
	if err != nil {
		return nil, fmt.Errorf("create the export side's cache of the hub: %w", err)
	}
	hubClient, err := client.New(hubCfg, client.Options{Scheme: hubScheme, Mapper: hubMapper(), Cache: &client.CacheOptions{Reader: hubCache}})
	if err != nil {
		return nil, fmt.Errorf("create the export side's client of the hub: %w", err)
	}
	e := &exporter{
		cluster: a.cfg.ClusterName, spoke: spoke, spokeCache: spokeCache, hub: hubClient, hubCache: hubCache, sets: sets,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](100*time.Millisecond, time.Minute),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "services-export"}),
	}
	sets.notifyImports(e.importChanged)
	return e, nil
}

// watch registers the handlers that queue the services to look at again.
func (e *exporter) watch(ctx context.Context) error {
	byName := func(obj client.Object) []types.NamespacedName {
		return []types.NamespacedName{{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
	}
	bySlice := func(obj client.Object) []types.NamespacedName {
		if svc := obj.GetLabels()[discoveryv1.LabelServiceName]; svc != "" {
			return []types.NamespacedName{{Namespace: obj.GetNamespace(), Name: svc}}
		}
		return nil
	}
	byExported := func(obj client.Object) []types.NamespacedName {
		l := obj.GetLabels()
		if l[mcs.ServiceNamespaceLabel] != "" && l[mcs.ServiceNameLabel] != "" {
			return []types.NamespacedName{{Namespace: l[mcs.ServiceNamespaceLabel], Name: l[mcs.ServiceNameLabel]}}
		}
		if es, ok := obj.(*mcsv1alpha1.ExportedService); ok && es.Spec.Namespace != "" {
			return []types.NamespacedName{{Namespace: es.Spec.Namespace, Name: es.Spec.Name}}
		}
		return nil
	}
	for _, w := range []struct {
		c    cache.Cache
		obj  client.Object
		keys func(client.Object) []types.NamespacedName
	}{
		{e.spokeCache, &mcsv1beta1.ServiceExport{}, byName},
		{e.spokeCache, &corev1.Service{}, byName},
		{e.spokeCache, &discoveryv1.EndpointSlice{}, bySlice},
		{e.hubCache, &mcsv1alpha1.ExportedService{}, byExported},
	} {
		inf, err := w.c.GetInformer(ctx, w.obj, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("watch %T: %w", w.obj, err)
		}
		if _, err := inf.AddEventHandler(enqueueHandler(e.queue, w.keys)); err != nil {
			return err
		}
	}
	return nil
}

// enqueueHandler queues the keys of each object that comes, changes or goes.
func enqueueHandler(q workqueue.TypedInterface[types.NamespacedName], keys func(client.Object) []types.NamespacedName) toolscache.ResourceEventHandler {
	add := func(obj any) {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if o, ok := obj.(client.Object); ok {
			for _, k := range keys(o) {
				q.Add(k)
			}
		}
	}
	return toolscache.ResourceEventHandlerFuncs{AddFunc: add, UpdateFunc: func(_, obj any) { add(obj) }, DeleteFunc: add}
}

// importChanged queues the service of a changed ImportedService, or
// (namespace "": the cluster's set changed) every export, which a worker
// lists once the caches have synced.
func (e *exporter) importChanged(namespace, name string) {
	e.queue.Add(types.NamespacedName{Namespace: namespace, Name: name})
}

// enqueueAll queues every ServiceExport of the cluster and every
// ExportedService of its namespace on the hub.
func (e *exporter) enqueueAll(ctx context.Context) {
	var exports mcsv1beta1.ServiceExportList
	if err := e.spokeCache.List(ctx, &exports); err == nil {
		for _, se := range exports.Items {
			e.queue.Add(types.NamespacedName{Namespace: se.Namespace, Name: se.Name})
		}
	}
	var published mcsv1alpha1.ExportedServiceList
	if err := e.hubCache.List(ctx, &published, client.InNamespace(e.cluster)); err == nil {
		for _, es := range published.Items {
			if es.Spec.Namespace != "" && es.Spec.Name != "" {
				e.queue.Add(types.NamespacedName{Namespace: es.Spec.Namespace, Name: es.Spec.Name})
			}
		}
	}
}

// next handles one queued service; false once the queue shuts down.
func (e *exporter) next(ctx context.Context) bool {
	key, shutdown := e.queue.Get()
	if shutdown {
		return false
	}
	defer e.queue.Done(key)
	if key == (types.NamespacedName{}) {
		e.enqueueAll(ctx)
		return true
	}
	if err := e.reconcile(ctx, key); err != nil {
		if ctx.Err() == nil {
			klog.FromContext(ctx).Info("Cannot export the service yet; retrying", "service", key.String(), "reason", err.Error())
		}
		e.queue.AddRateLimited(key)
		return true
	}
	e.queue.Forget(key)
	return true
}

// reconcile brings the hub's ExportedService of Service key and the
// conditions of its ServiceExport in line with the cluster.
func (e *exporter) reconcile(ctx context.Context, key types.NamespacedName) error {
	se := &mcsv1beta1.ServiceExport{}
	if err := e.spoke.Get(ctx, key, se); apierrors.IsNotFound(err) || err == nil && se.DeletionTimestamp != nil {
		return e.unpublish(ctx, key)
	} else if err != nil {
		return err
	}
	svc := &corev1.Service{}
	err := e.spoke.Get(ctx, key, svc)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	st := exportStatus{generation: se.Generation}
	switch {
	case err != nil:
		st.valid = condition(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonNoService,
			fmt.Sprintf("Service %s does not exist in the cluster: create it, or delete this ServiceExport", key))
	case exportable(svc) != "":
		st.valid = condition(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonInvalidServiceType, exportable(svc))
	default:
		st.valid = condition(mcsv1beta1.ServiceExportConditionValid, metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonValid,
			fmt.Sprintf("Service %s is exported", key))
	}
	if st.valid.Status != metav1.ConditionTrue {
		if err := e.unpublish(ctx, key); err != nil {
			return err
		}
		st.ready = condition(mcsv1beta1.ServiceExportConditionReady, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonPending,
			"not exported until the export is valid (see condition Valid)")
		return e.writeStatus(ctx, se, st)
	}

	var eps discoveryv1.EndpointSliceList
	if err := e.spoke.List(ctx, &eps, client.InNamespace(key.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: key.Name}); err != nil {
		return err
	}
	spec := mcsv1alpha1.ExportedServiceSpec{
		Namespace: key.Namespace, Name: key.Name,
		ExportCreationTimestamp: se.CreationTimestamp,
		ServiceProperties:       exportProperties(svc, se),
		Endpoints:               endpointGroups(eps.Items),
	}
	published, pubErr := e.publish(ctx, key, &spec)
	st.conflict = conflictOf(published)
	switch {
	case pubErr != nil:
		var refused *refusal
		if errors.As(pubErr, &refused) {
			st.ready = condition(mcsv1beta1.ServiceExportConditionReady, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonFailed, refused.Error())
			return e.writeStatus(ctx, se, st)
		}
		st.ready = condition(mcsv1beta1.ServiceExportConditionReady, metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonPending,
			fmt.Sprintf("cannot publish ExportedService %s/%s to the hub (retrying): %v", e.cluster, mcs.ObjectName(key.Namespace, key.Name), pubErr))
		return errors.Join(pubErr, e.writeStatus(ctx, se, st))
	}
	st.ready = e.readiness(ctx, key, published)
	return e.writeStatus(ctx, se, st)
}

// refusal is an export the hub cannot take whole: the previous
// ExportedService, if any, stays as it was.
type refusal struct{ reason string }

func (r *refusal) Error() string { return r.reason }

// exportLabels are the labels of the ExportedService of Service key.
func (e *exporter) exportLabels(key types.NamespacedName) map[string]string {
	return map[string]string{mcs.ClusterLabel: e.cluster, mcs.ServiceNamespaceLabel: key.Namespace, mcs.ServiceNameLabel: key.Name}
}

// publish creates or updates the ExportedService of Service key to hold
// spec, unless it already does, and returns it as the hub has it. An
// export too large for one object is refused whole (a *refusal); the
// hub's object is then returned unchanged, or nil.
func (e *exporter) publish(ctx context.Context, key types.NamespacedName, spec *mcsv1alpha1.ExportedServiceSpec) (*mcsv1alpha1.ExportedService, error) {
	name := client.ObjectKey{Namespace: e.cluster, Name: mcs.ObjectName(key.Namespace, key.Name)}
	got, err := e.current(ctx, key)
	if err != nil {
		return nil, err
	}
	if why := tooLarge(spec); why != "" {
		msg := fmt.Sprintf("not published: %s; ", why)
		if got != nil {
			msg += fmt.Sprintf("the hub keeps the endpoints last published (generation %d)", got.Generation)
		} else {
			msg += "the hub has none of the cluster's endpoints of the service"
		}
		return got, &refusal{reason: msg}
	}
	want := e.exportLabels(key)
	if got == nil {
		es := &mcsv1alpha1.ExportedService{ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name, Labels: want}, Spec: *spec}
		if err := e.hub.Create(ctx, es); err != nil {
			return nil, fmt.Errorf("create ExportedService %s: %w", name, err)
		}
		e.written.Store(key, es.DeepCopy())
		klog.FromContext(ctx).V(1).Info("Published the export", "service", key.String(), "generation", es.Generation)
		return es, nil
	}
	next := got.DeepCopy()
	next.Spec = *spec
	for k, v := range want {
		metav1.SetMetaDataLabel(&next.ObjectMeta, k, v)
	}
	if equality.Semantic.DeepEqual(got.Spec, next.Spec) && equality.Semantic.DeepEqual(got.Labels, next.Labels) {
		return got, nil
	}
	// A merge patch without a resourceVersion: the agent is the only
	// writer of spec and labels, and the hub's status writes in between
	// must not make it write twice.
	if err := e.hub.Patch(ctx, next, client.MergeFrom(got)); err != nil {
		if apierrors.IsNotFound(err) {
			e.written.Delete(key)
		}
		return nil, fmt.Errorf("update ExportedService %s: %w", name, err)
	}
	e.written.Store(key, next.DeepCopy())
	klog.FromContext(ctx).V(2).Info("Published the export", "service", key.String(), "generation", next.Generation)
	return next, nil
}

// current returns the hub's ExportedService of Service key as the agent
// last saw it, or nil: the cache's copy, or the agent's own last write
// where the cache has not caught up with it yet.
func (e *exporter) current(ctx context.Context, key types.NamespacedName) (*mcsv1alpha1.ExportedService, error) {
	got := &mcsv1alpha1.ExportedService{}
	err := e.hub.Get(ctx, client.ObjectKey{Namespace: e.cluster, Name: mcs.ObjectName(key.Namespace, key.Name)}, got)
	if apierrors.IsNotFound(err) {
		got = nil
	} else if err != nil {
		return nil, err
	}
	v, ok := e.written.Load(key)
	if !ok {
		return got, nil
	}
	w := v.(*mcsv1alpha1.ExportedService)
	switch {
	case got == nil:
		// Created by the agent and not in the cache yet, or deleted by
		// someone else: a write finds out.
		return w.DeepCopy(), nil
	case got.UID != w.UID || got.Generation >= w.Generation:
		e.written.Delete(key)
		return got, nil
	}
	return w.DeepCopy(), nil
}

// unpublish deletes the ExportedService of Service key, if the hub has one.
func (e *exporter) unpublish(ctx context.Context, key types.NamespacedName) error {
	got, err := e.current(ctx, key)
	if err != nil || got == nil {
		return err
	}
	e.written.Delete(key)
	if got.DeletionTimestamp != nil {
		return nil
	}
	err = e.hub.Delete(ctx, got, client.Preconditions{UID: &got.UID})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete ExportedService %s/%s: %w", got.Namespace, got.Name, err)
	}
	klog.FromContext(ctx).V(1).Info("Withdrew the export", "service", key.String())
	return nil
}
