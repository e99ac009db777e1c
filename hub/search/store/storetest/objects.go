package storetest

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
)

// obj builds an object; opts fill in the rest.
func obj(kind, namespace, name string, opts ...func(*searchv1alpha1.Object)) searchv1alpha1.Object {
	o := searchv1alpha1.Object{
		Version: "v1", Kind: kind, Namespace: namespace, Name: name,
		UID:               types.UID(fmt.Sprintf("uid-%s-%s-%s", kind, namespace, name)),
		ResourceVersion:   "1",
		CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
	}
	switch kind {
	case "Pod":
		o.Resource = "pods"
	case "Node":
		o.Resource = "nodes"
	case "ConfigMap":
		o.Resource = "configmaps"
	case "Deployment":
		o.Group, o.Resource = "apps", "deployments"
	default:
		o.Resource = "others"
	}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

func labels(kv ...string) func(*searchv1alpha1.Object) {
	return func(o *searchv1alpha1.Object) {
		o.Labels = map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			o.Labels[kv[i]] = kv[i+1]
		}
	}
}

func images(images ...string) func(*searchv1alpha1.Object) {
	return func(o *searchv1alpha1.Object) { o.Images = images }
}

func status(s string) func(*searchv1alpha1.Object) {
	return func(o *searchv1alpha1.Object) { o.Status = s }
}

func owner(kind, name string) func(*searchv1alpha1.Object) {
	return func(o *searchv1alpha1.Object) {
		o.Owner = &searchv1alpha1.Owner{Kind: kind, Name: name, UID: types.UID("owner-" + name)}
	}
}

func fields(kv ...string) func(*searchv1alpha1.Object) {
	return func(o *searchv1alpha1.Object) {
		o.Fields = map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			o.Fields[kv[i]] = kv[i+1]
		}
	}
}

func rv(v string) func(*searchv1alpha1.Object) {
	return func(o *searchv1alpha1.Object) { o.ResourceVersion = v }
}

func uid(u string) func(*searchv1alpha1.Object) {
	return func(o *searchv1alpha1.Object) { o.UID = types.UID(u) }
}

func ref(o searchv1alpha1.Object) searchv1alpha1.ObjectRef {
	return searchv1alpha1.ObjectRef{Group: o.Group, Resource: o.Resource, UID: o.UID}
}

// key names an item in the tests' expectations.
func key(item searchv1alpha1.SearchItem) string {
	return fmt.Sprintf("%s/%s/%s/%s", item.Cluster, item.Kind, item.Namespace, item.Name)
}
