package cmdutil

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Lookup says which objects of one kind a get command shows.
type Lookup struct {
	// Kind names the objects in messages ("ManagedCluster").
	Kind string
	// Namespace is where to look; empty for every namespace, or for a
	// kind without namespaces.
	Namespace string
	// Names are the objects asked for; none asks for all.
	Names []string
	// ListCommand is the command that lists the names, for a not-found
	// error to suggest ("flotilla get clusters").
	ListCommand string
}

// GetOrList gets the named objects, each of which must exist, or lists
// every object of list's kind when none is named, and returns them sorted
// by namespace and name. PT is the pointer to an item of list.
func GetOrList[T any, PT interface {
	*T
	client.Object
}](ctx context.Context, c *Clients, list client.ObjectList, l Lookup) ([]T, error) {
	var items []T
	if len(l.Names) == 0 {
		var opts []client.ListOption
		if l.Namespace != "" {
			opts = append(opts, client.InNamespace(l.Namespace))
		}
		if err := c.Ctrl.List(ctx, list, opts...); err != nil {
			return nil, ExplainClusterAPI(err, c, "list "+l.Kind+"s")
		}
		objs, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			p, ok := o.(PT)
			if !ok {
				return nil, fmt.Errorf("internal error: a %T in a list of %s", o, l.Kind)
			}
			items = append(items, *p)
		}
	}
	for _, name := range l.Names {
		var obj T
		key := client.ObjectKey{Namespace: l.Namespace, Name: name}
		if err := c.Ctrl.Get(ctx, key, PT(&obj)); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, l.notFound(name, c.Where)
			}
			return nil, ExplainClusterAPI(err, c, "get "+l.Kind+" "+key.String())
		}
		items = append(items, obj)
	}
	slices.SortFunc(items, func(a, b T) int {
		pa, pb := PT(&a), PT(&b)
		return cmp.Or(strings.Compare(pa.GetNamespace(), pb.GetNamespace()), strings.Compare(pa.GetName(), pb.GetName()))
	})
	return items, nil
}

// notFound says that a named object does not exist, and how to see the
// names that do.
func (l Lookup) notFound(name, where string) error {
	if l.Namespace != "" {
		return fmt.Errorf("%s %s not found in namespace %s on %s (see `%s -n %s` for the names)", l.Kind, name, l.Namespace, where, l.ListCommand, l.Namespace)
	}
	return fmt.Errorf("%s %q not found on %s (see `%s` for the names)", l.Kind, name, where, l.ListCommand)
}

// AsFound readies items for -o json|yaml: each carries its apiVersion
// and kind (a typed client leaves them empty) and no managedFields.
func AsFound[T any, PT interface {
	*T
	client.Object
}](items []T, gvk schema.GroupVersionKind) []client.Object {
	objs := make([]client.Object, len(items))
	for i := range items {
		o := PT(&items[i])
		o.GetObjectKind().SetGroupVersionKind(gvk)
		o.SetManagedFields(nil)
		objs[i] = o
	}
	return objs
}

// ListKind is the kind of a list of objects of gvk, "ManagedClusterList".
func ListKind(gvk schema.GroupVersionKind) schema.GroupVersionKind {
	return gvk.GroupVersion().WithKind(gvk.Kind + "List")
}

// MixedList is the kind of a list of objects of several kinds: the v1
// List that kubectl get KIND1,KIND2 -o json prints.
var MixedList = schema.GroupVersionKind{Version: "v1", Kind: "List"}

// foundList is a list as -o json|yaml prints it.
type foundList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []client.Object `json:"items"`
}

// PrintFound prints what a get command found for -o json|yaml, as kubectl
// does: the object itself when the command named one object, else a list
// of kind listKind (ListKind, or MixedList) holding objs, which AsFound
// readied.
func PrintFound(w io.Writer, format string, objs []client.Object, listKind schema.GroupVersionKind, one bool) error {
	if one && len(objs) == 1 {
		return PrintData(w, format, objs[0])
	}
	list := foundList{Items: objs}
	list.APIVersion, list.Kind = listKind.GroupVersion().String(), listKind.Kind
	if list.Items == nil {
		list.Items = []client.Object{}
	}
	return PrintData(w, format, list)
}
