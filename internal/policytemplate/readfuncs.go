package policytemplate

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ObjectReader reads the objects that template functions refer to.
type ObjectReader interface {
	// Mapping resolves a kind to its resource and scope; for a kind that
	// is not served, an error for which meta.IsNoMatchError holds.
	Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error)
	// Get returns the object, or nil when it does not exist.
	Get(m *meta.RESTMapping, namespace, name string) (*unstructured.Unstructured, error)
	// List returns the objects in namespace (every one when empty) whose
	// labels match selector.
	List(m *meta.RESTMapping, namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error)
}

// Ref is an object a resolution read, found or not; an empty Name stands
// for the objects of the kind in Namespace, as a list read them.
type Ref struct {
	Resource        schema.GroupVersionResource
	Kind            string
	Namespace, Name string
}

// ReadFuncs are the template functions that read objects, as OCM's
// template library offers them: lookup, fromSecret, copySecretData,
// fromConfigMap, copyConfigMapData, fromClusterClaim, lookupClusterClaim,
// getNodesWithExactRoles and hasNodesWithExactRoles. A managed cluster's
// may read anything the agent may; a hub's (Namespace set) only the
// policy's namespace and the cluster-scoped objects Allowed names.
type ReadFuncs struct {
	// Reader reads the objects.
	Reader ObjectReader
	// Namespace, when set, is the only namespace the functions read; an
	// empty namespace argument means it.
	Namespace string
	// Allowed says which cluster-scoped objects may be read while
	// Namespace is set.
	Allowed func(gvk schema.GroupVersionKind, name string) bool
	// Sensitive says that a function read a Secret.
	Sensitive bool
	// Refs are the objects read, found or not.
	Refs []Ref
}

// Add adds the functions to m.
func (f *ReadFuncs) Add(m map[string]any) map[string]any {
	m["lookup"] = f.lookup
	m["fromSecret"] = f.fromSecret
	m["copySecretData"] = f.copySecretData
	m["fromConfigMap"] = f.fromConfigMap
	m["copyConfigMapData"] = f.copyConfigMapData
	m["fromClusterClaim"] = f.fromClusterClaim
	m["lookupClusterClaim"] = f.lookupClusterClaim
	m["getNodesWithExactRoles"] = f.getNodesWithExactRoles
	m["hasNodesWithExactRoles"] = f.hasNodesWithExactRoles
	return m
}

// clusterClaimGVK is the kind of ClusterClaims.
var clusterClaimGVK = schema.GroupVersionKind{Group: "cluster.open-cluster-management.io", Version: "v1alpha1", Kind: "ClusterClaim"}

// scope checks that ns may be read for kind m and returns the namespace
// to read ("" for a cluster-scoped kind).
func (f *ReadFuncs) scope(m *meta.RESTMapping, ns, name string) (string, error) {
	namespacedKind := m.Scope != nil && m.Scope.Name() == meta.RESTScopeNameNamespace
	if f.Namespace == "" {
		if !namespacedKind {
			return "", nil
		}
		return ns, nil
	}
	if !namespacedKind {
		if f.Allowed != nil && f.Allowed(m.GroupVersionKind, name) {
			return "", nil
		}
		return "", fmt.Errorf("lookup of cluster-scoped resource '%s/%s' is not allowed: hub templates read only the namespace of the policy, %s",
			m.GroupVersionKind.Kind, name, f.Namespace)
	}
	if ns == "" {
		return f.Namespace, nil
	}
	if ns != f.Namespace {
		return "", fmt.Errorf("%w to %s: the %s %s/%s is out of reach, hub templates read only the namespace of the policy; "+
			"move the %s there or leave the namespace empty", ErrRestrictedNamespace, f.Namespace, m.GroupVersionKind.Kind, ns, name, m.GroupVersionKind.Kind)
	}
	return ns, nil
}

// mapping resolves gvk; a kind the cluster does not serve is OCM's
// missing API resource.
func (f *ReadFuncs) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := f.Reader.Mapping(gvk)
	if meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("%w: %w", ErrMissingAPIResource, err)
	}
	return m, err
}

// get reads one object of kind gvk; a missing one is the API server's
// NotFound error, as OCM's functions report it.
func (f *ReadFuncs) get(gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	if gvk.Group == "" && gvk.Kind == "Secret" {
		f.Sensitive = true
	}
	m, err := f.mapping(gvk)
	if err != nil {
		return nil, err
	}
	if ns, err = f.scope(m, ns, name); err != nil {
		return nil, err
	}
	f.Refs = append(f.Refs, Ref{Resource: m.Resource, Kind: gvk.Kind, Namespace: ns, Name: name})
	obj, err := f.Reader.Get(m, ns, name)
	if err == nil && obj == nil {
		err = apierrors.NewNotFound(m.Resource.GroupResource(), name)
	}
	return obj, err
}

// lookup returns the object apiVersion/kind ns/name (an empty map when it
// does not exist), or with an empty name the list of such objects whose
// labels match the selectors.
func (f *ReadFuncs) lookup(apiVersion, kind, ns, name string, selectors ...string) (map[string]any, error) {
	if apiVersion == "" || kind == "" {
		return nil, errors.New("the apiVersion and kind are required")
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	gvk := gv.WithKind(kind)
	if name != "" {
		obj, err := f.get(gvk, ns, name)
		if apierrors.IsNotFound(err) {
			return map[string]any{}, nil
		}
		if err != nil {
			return nil, err
		}
		return runtime.DeepCopyJSON(obj.Object), nil
	}
	return f.list(gvk, ns, selectors...)
}

// list returns the objects of kind gvk in ns that match the selectors, as
// a List.
func (f *ReadFuncs) list(gvk schema.GroupVersionKind, ns string, selectors ...string) (map[string]any, error) {
	sel := labels.Everything()
	if len(selectors) > 0 && selectors[0] != "" {
		var err error
		if sel, err = labels.Parse(strings.Join(selectors, ",")); err != nil {
			return nil, err
		}
	}
	if gvk.Group == "" && gvk.Kind == "Secret" {
		f.Sensitive = true
	}
	m, err := f.mapping(gvk)
	if err != nil {
		return nil, err
	}
	if ns, err = f.scope(m, ns, ""); err != nil {
		return nil, err
	}
	f.Refs = append(f.Refs, Ref{Resource: m.Resource, Kind: gvk.Kind, Namespace: ns})
	objs, err := f.Reader.List(m, ns, sel)
	if err != nil {
		return nil, err
	}
	sortByName(objs)
	items := make([]any, len(objs))
	for i, o := range objs {
		items[i] = runtime.DeepCopyJSON(o.Object)
	}
	return map[string]any{"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind + "List", "items": items}, nil
}

var (
	secretGVK    = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	configMapGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	nodeGVK      = schema.GroupVersionKind{Version: "v1", Kind: "Node"}
)

// fromSecret returns the value of key in Secret ns/name, base64-encoded as
// it is stored, so that it can go into another Secret's data.
func (f *ReadFuncs) fromSecret(ns, name, key string) (string, error) {
	f.Sensitive = true
	if (ns == "" && f.Namespace == "") || name == "" || key == "" {
		return "", fmt.Errorf("%w: namespace, name, and key must be specified", ErrInvalidInput)
	}
	obj, err := f.get(secretGVK, ns, name)
	if err != nil {
		return "", fmt.Errorf("failed to get the secret %s from %s: %w", name, f.or(ns), err)
	}
	v, _, _ := unstructured.NestedString(obj.Object, "data", key)
	return v, nil
}

// copySecretData returns the data of Secret ns/name as JSON, its values
// base64-encoded as stored, for the data of another Secret.
func (f *ReadFuncs) copySecretData(ns, name string) (string, error) {
	f.Sensitive = true
	if (ns == "" && f.Namespace == "") || name == "" {
		return "", fmt.Errorf("%w: namespace and name must be specified", ErrInvalidInput)
	}
	obj, err := f.get(secretGVK, ns, name)
	if err != nil {
		return "", fmt.Errorf("failed to get the secret %s from %s: %w", name, f.or(ns), err)
	}
	return dataJSON(obj)
}

// fromConfigMap returns the value of key in ConfigMap ns/name.
func (f *ReadFuncs) fromConfigMap(ns, name, key string) (string, error) {
	if (ns == "" && f.Namespace == "") || name == "" || key == "" {
		return "", fmt.Errorf("%w: namespace, name, and key must be specified", ErrInvalidInput)
	}
	obj, err := f.get(configMapGVK, ns, name)
	if err != nil {
		return "", fmt.Errorf("failed getting the ConfigMap %s from %s: %w", name, f.or(ns), err)
	}
	v, _, _ := unstructured.NestedString(obj.Object, "data", key)
	return v, nil
}

// copyConfigMapData returns the data of ConfigMap ns/name as JSON.
func (f *ReadFuncs) copyConfigMapData(ns, name string) (string, error) {
	if (ns == "" && f.Namespace == "") || name == "" {
		return "", fmt.Errorf("%w: namespace and name must be specified", ErrInvalidInput)
	}
	obj, err := f.get(configMapGVK, ns, name)
	if err != nil {
		return "", fmt.Errorf("failed getting the ConfigMap %s from %s: %w", name, f.or(ns), err)
	}
	return dataJSON(obj)
}

// dataJSON is an object's data as JSON ({} without data).
func dataJSON(obj *unstructured.Unstructured) (string, error) {
	data, _, _ := unstructured.NestedMap(obj.Object, "data")
	if data == nil {
		data = map[string]any{}
	}
	out, err := json.Marshal(data)
	return string(out), err
}

// fromClusterClaim returns the value of ClusterClaim name.
func (f *ReadFuncs) fromClusterClaim(name string) (string, error) {
	return f.clusterClaim(name, false)
}

// lookupClusterClaim returns the value of ClusterClaim name, empty when
// there is no such claim.
func (f *ReadFuncs) lookupClusterClaim(name string) (string, error) {
	return f.clusterClaim(name, true)
}

func (f *ReadFuncs) clusterClaim(name string, missingOK bool) (string, error) {
	if name == "" {
		return "", errors.New("a claim name must be provided")
	}
	obj, err := f.get(clusterClaimGVK, "", name)
	if missingOK && apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	spec, ok := obj.Object["spec"].(map[string]any)
	if !ok {
		return "", fmt.Errorf("unexpected ClusterClaim format: %s", name)
	}
	v, _ := spec["value"].(string)
	return v, nil
}

// nodeRolePrefix starts the labels that give a node its roles.
const nodeRolePrefix = "node-role.kubernetes.io/"

// getNodesWithExactRoles returns the list of nodes that have each of
// roles and no other role but worker.
func (f *ReadFuncs) getNodesWithExactRoles(roles ...string) (map[string]any, error) {
	var keys []string
	for _, r := range roles {
		if strings.TrimSpace(r) != "" {
			keys = append(keys, nodeRolePrefix+r)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: at least one name must be specified", ErrInvalidInput)
	}
	nodes, err := f.list(nodeGVK, "", keys...)
	if err != nil {
		return nil, err
	}
	allowed := map[string]bool{nodeRolePrefix + "worker": true}
	for _, k := range keys {
		allowed[k] = true
	}
	var items []any
	for _, item := range nodes["items"].([]any) {
		node := &unstructured.Unstructured{Object: item.(map[string]any)}
		exact := true
		for k := range node.GetLabels() {
			if strings.HasPrefix(k, "node-role.kubernetes.io") && !allowed[k] {
				exact = false
				break
			}
		}
		if exact {
			items = append(items, item)
		}
	}
	if items == nil {
		items = []any{}
	}
	nodes["items"] = items
	return nodes, nil
}

// hasNodesWithExactRoles says whether getNodesWithExactRoles finds a node.
func (f *ReadFuncs) hasNodesWithExactRoles(roles ...string) (bool, error) {
	nodes, err := f.getNodesWithExactRoles(roles...)
	if err != nil {
		return false, err
	}
	return len(nodes["items"].([]any)) > 0, nil
}

// or is ns, or the namespace an empty one means.
func (f *ReadFuncs) or(ns string) string {
	if ns == "" {
		return f.Namespace
	}
	return ns
}

// sortByName sorts objects by namespace and name.
func sortByName(objs []*unstructured.Unstructured) {
	sort.Slice(objs, func(i, j int) bool {
		if objs[i].GetNamespace() != objs[j].GetNamespace() {
			return objs[i].GetNamespace() < objs[j].GetNamespace()
		}
		return objs[i].GetName() < objs[j].GetName()
	})
}
