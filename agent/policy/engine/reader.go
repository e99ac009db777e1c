package engine

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Reader reads the objects a policy is evaluated against. The engine
// never changes what it returns.
type Reader interface {
	// Mapping resolves a kind to its resource and scope. An error for which
	// meta.IsNoMatchError holds means the cluster does not serve the kind.
	Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error)
	// Get returns the object, or nil when it does not exist.
	Get(ctx context.Context, m *meta.RESTMapping, namespace, name string) (*unstructured.Unstructured, error)
	// List returns the objects in namespace (every namespace when empty)
	// whose labels match selector.
	List(ctx context.Context, m *meta.RESTMapping, namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error)
}

// ClusterReader reads a live cluster with a dynamic client, every call a
// request to the API server.
type ClusterReader struct {
	// Client reads the objects.
	Client dynamic.Interface
	// Mapper resolves kinds, with discovery.
	Mapper meta.RESTMapper
}

var _ Reader = &ClusterReader{}

// Mapping resolves gvk with the mapper.
func (c *ClusterReader) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	return c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
}

// Get reads one object.
func (c *ClusterReader) Get(ctx context.Context, m *meta.RESTMapping, namespace, name string) (*unstructured.Unstructured, error) {
	obj, err := c.resource(m, namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

// List lists objects.
func (c *ClusterReader) List(ctx context.Context, m *meta.RESTMapping, namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error) {
	opts := metav1.ListOptions{}
	if selector != nil && !selector.Empty() {
		opts.LabelSelector = selector.String()
	}
	list, err := c.resource(m, namespace).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

func (c *ClusterReader) resource(m *meta.RESTMapping, namespace string) dynamic.ResourceInterface {
	r := c.Client.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return r.Namespace(namespace)
	}
	return r
}

// namespaced says whether a mapping's kind is namespaced.
func namespaced(m *meta.RESTMapping) bool {
	return m != nil && m.Scope != nil && m.Scope.Name() == meta.RESTScopeNameNamespace
}
