package work

import (
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// manifest is one manifest of a work as the agent applies it.
type manifest struct {
	ordinal int
	// meta names the manifest in status, as far as it is known.
	meta workv1.ManifestResourceMeta
	key  objectKey
	// desired is the manifest without what the API server owns (status,
	// resourceVersion, uid, …), the namespace settled by the kind's scope.
	desired *unstructured.Unstructured
	// hash is manifestHash(desired).
	hash     string
	config   *workv1.ManifestConfigOption
	strategy workv1.UpdateStrategyType
	// invalid says why the manifest cannot be applied at all: it does not
	// decode, or the spoke does not serve its kind.
	invalid error
	// result is what this pass did with it.
	result applyResult
}

// serverFields are the metadata fields an API server sets; a manifest's
// values for them are dropped, as for status.
var serverFields = []string{"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}

// planManifest decodes manifest i and resolves its kind on the spoke.
func (r *reconciler) planManifest(i int, m workv1.Manifest, configs []workv1.ManifestConfigOption) *manifest {
	p := &manifest{ordinal: i, meta: workv1.ManifestResourceMeta{Ordinal: int32(i)}, strategy: workv1.UpdateStrategyTypeUpdate}
	raw := m.Raw
	if raw == nil && m.Object != nil {
		raw, _ = json.Marshal(m.Object)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		p.invalid = fmt.Errorf("manifest %d is not a Kubernetes object: %w", i, err)
		return p
	}
	gvk := u.GroupVersionKind()
	p.meta.Group, p.meta.Version, p.meta.Kind = gvk.Group, gvk.Version, gvk.Kind
	p.meta.Name, p.meta.Namespace = u.GetName(), u.GetNamespace()
	if u.GetName() == "" {
		p.invalid = fmt.Errorf("manifest %d (%s) has no metadata.name", i, gvk.Kind)
		return p
	}
	mapping, err := r.spoke.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		p.invalid = kindError(gvk, err)
		return p
	}
	p.meta.Resource = mapping.Resource.Resource
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if u.GetNamespace() == "" {
			p.invalid = fmt.Errorf("%s %s is namespaced: the manifest needs metadata.namespace", gvk.Kind, u.GetName())
			return p
		}
	} else {
		u.SetNamespace("")
		p.meta.Namespace = ""
	}
	unstructured.RemoveNestedField(u.Object, "status")
	for _, f := range serverFields {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	p.desired, p.hash = u, manifestHash(u)
	p.key = objectKey{GroupVersionResource: mapping.Resource, Namespace: u.GetNamespace(), Name: u.GetName()}
	p.config = findConfig(configs, p.key.identity())
	if p.config != nil && p.config.UpdateStrategy != nil && p.config.UpdateStrategy.Type != "" {
		p.strategy = p.config.UpdateStrategy.Type
	}
	return p
}

// kindError says why the spoke cannot take objects of kind gvk.
func kindError(gvk schema.GroupVersionKind, err error) error {
	if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) || errors.As(err, new(*apiutil.ErrResourceDiscoveryFailed)) {
		return fmt.Errorf("the managed cluster does not serve kind %s in %s: %w", gvk.Kind, gvk.GroupVersion(), err)
	}
	return fmt.Errorf("cannot look up kind %s in %s on the managed cluster: %w", gvk.Kind, gvk.GroupVersion(), err)
}

// findConfig returns the manifestConfig that names the object id; "*"
// matches any namespace or name.
func findConfig(configs []workv1.ManifestConfigOption, id workv1.ResourceIdentifier) *workv1.ManifestConfigOption {
	for i := range configs {
		c := configs[i].ResourceIdentifier
		if c.Group == id.Group && c.Resource == id.Resource && matches(c.Namespace, id.Namespace) && matches(c.Name, id.Name) {
			return &configs[i]
		}
	}
	return nil
}

func matches(pattern, s string) bool { return pattern == "*" || pattern == s }
