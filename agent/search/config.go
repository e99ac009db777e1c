package search

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
)

// configWatch follows the hub's SearchConfig named default.
type configWatch struct {
	res dynamic.ResourceInterface
}

func newConfigWatch(hub *rest.Config) (*configWatch, error) {
	d, err := dynamic.NewForConfig(hub)
	if err != nil {
		return nil, fmt.Errorf("search agent: %w", err)
	}
	return &configWatch{res: d.Resource(searchv1alpha1.GroupVersion.WithResource("searchconfigs"))}, nil
}

// run calls configure with the resources to index, at once and again
// whenever the SearchConfig changes, until ctx ends. Without a
// SearchConfig (or on a hub that serves none) they are DefaultResources.
func (w *configWatch) run(ctx context.Context, configure func(context.Context, []searchv1alpha1.SearchResource)) error {
	logger := klog.FromContext(ctx)
	byName := fields.OneTermEqualSelector("metadata.name", searchv1alpha1.DefaultConfigName).String()
	// The first answer decides at once; without it the agent would index
	// nothing until the hub answers a watch.
	var last []searchv1alpha1.SearchResource
	apply := func(want []searchv1alpha1.SearchResource) {
		if last != nil && reflect.DeepEqual(last, want) {
			return
		}
		last = want
		configure(ctx, want)
	}
	u, err := w.res.Get(ctx, searchv1alpha1.DefaultConfigName, metav1.GetOptions{})
	switch {
	case err == nil:
		apply(resources(ctx, u))
	case apierrors.IsNotFound(err):
		apply(searchv1alpha1.DefaultResources)
	case apierrors.IsForbidden(err):
		// A hub older than search grants no SearchConfig reads.
		logger.Info("The hub does not let this agent read SearchConfigs; indexing the default resources", "reason", err.Error())
		apply(searchv1alpha1.DefaultResources)
		<-ctx.Done()
		return nil
	default:
		return fmt.Errorf("search agent: read SearchConfig %s: %w", searchv1alpha1.DefaultConfigName, err)
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = byName
			return w.res.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = byName
			return w.res.Watch(ctx, o)
		},
	}
	changed := make(chan []searchv1alpha1.SearchResource, 1)
	post := func(want []searchv1alpha1.SearchResource) {
		select {
		case <-changed:
		default:
		}
		changed <- want
	}
	inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { post(resources(ctx, o)) },
		UpdateFunc: func(_, o any) { post(resources(ctx, o)) },
		DeleteFunc: func(any) { post(searchv1alpha1.DefaultResources) },
	}); err != nil {
		return err
	}
	go inf.Run(ctx.Done())
	for {
		select {
		case <-ctx.Done():
			return nil
		case want := <-changed:
			apply(want)
		}
	}
}

// resources are what SearchConfig o lists.
func resources(ctx context.Context, o any) []searchv1alpha1.SearchResource {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return searchv1alpha1.DefaultResources
	}
	var sc searchv1alpha1.SearchConfig
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &sc); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot read the hub's SearchConfig; indexing the default resources")
		return searchv1alpha1.DefaultResources
	}
	if sc.Spec.Resources == nil {
		return []searchv1alpha1.SearchResource{}
	}
	return sc.Spec.Resources
}
