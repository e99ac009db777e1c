package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/api/install"
)

// ObjectSet is a cluster's objects held in memory, for evaluating
// policies offline: what a directory of YAML files says the cluster holds.
// It knows the built-in kinds of Kubernetes, the OCM kinds, the kinds of
// the CustomResourceDefinitions it holds, and the kinds of its objects.
type ObjectSet struct {
	mapper  *meta.DefaultRESTMapper
	objects []*unstructured.Unstructured
}

var _ Reader = &ObjectSet{}

// clusterScoped are the built-in and OCM kinds that are not namespaced.
var clusterScoped = map[string]bool{
	"Namespace": true, "Node": true, "PersistentVolume": true, "ComponentStatus": true,
	"ClusterRole": true, "ClusterRoleBinding": true, "CustomResourceDefinition": true, "APIService": true,
	"StorageClass": true, "CSIDriver": true, "CSINode": true, "VolumeAttachment": true, "VolumeAttributesClass": true,
	"PriorityClass": true, "RuntimeClass": true, "IngressClass": true,
	"MutatingWebhookConfiguration": true, "ValidatingWebhookConfiguration": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
	"MutatingAdmissionPolicy": true, "MutatingAdmissionPolicyBinding": true,
	"CertificateSigningRequest": true, "ClusterTrustBundle": true, "FlowSchema": true, "PriorityLevelConfiguration": true,
	"DeviceClass": true, "ResourceSlice": true, "DeviceTaintRule": true, "IPAddress": true, "ServiceCIDR": true,
	"StorageVersion": true, "StorageVersionMigration": true, "TokenReview": true, "SubjectAccessReview": true,
	"SelfSubjectAccessReview": true, "SelfSubjectRulesReview": true, "SelfSubjectReview": true,
	"ManagedCluster": true, "ManagedClusterSet": true, "ClusterClaim": true, "AppliedManifestWork": true,
	"ClusterManagementAddOn": true,
}

// notKinds are types of the schemes that are no resources.
var notKinds = map[string]bool{
	"WatchEvent": true, "Status": true, "APIVersions": true, "APIGroup": true, "APIGroupList": true,
	"APIResourceList": true, "Scale": true, "Eviction": true, "Binding": true,
}

// NewObjectSet holds objs, which it may change: namespaced objects without
// a namespace are put in "default", Secrets' stringData is moved into data,
// and every namespace that an object is in exists.
func NewObjectSet(objs []*unstructured.Unstructured) *ObjectSet {
	s := &ObjectSet{mapper: meta.NewDefaultRESTMapper(nil)}
	s.addSchemeKinds()
	for _, o := range objs {
		s.addCRD(o)
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if _, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			scope := meta.RESTScopeRoot
			if o.GetNamespace() != "" {
				scope = meta.RESTScopeNamespace
			}
			s.add(gvk, scope)
		}
	}
	namespaces := map[string]bool{}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, _ := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		switch {
		case namespaced(m) && o.GetNamespace() == "":
			o.SetNamespace("default")
		case !namespaced(m):
			o.SetNamespace("")
		}
		if gvk.GroupKind() == namespaceGVK.GroupKind() {
			namespaces[o.GetName()] = true
		}
		if gvk.GroupKind() == (schema.GroupKind{Kind: "Secret"}) {
			moveStringData(o)
		}
		s.objects = append(s.objects, o)
	}
	for _, o := range objs {
		if ns := o.GetNamespace(); ns != "" && !namespaces[ns] {
			namespaces[ns] = true
			n := &unstructured.Unstructured{}
			n.SetGroupVersionKind(namespaceGVK)
			n.SetName(ns)
			s.objects = append(s.objects, n)
		}
	}
	return s
}

// addSchemeKinds maps the built-in kinds and those of the api module.
func (s *ObjectSet) addSchemeKinds() {
	sch := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(sch)
	_ = install.AddToScheme(sch)
	for gvk := range sch.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || notKinds[gvk.Kind] ||
			strings.HasSuffix(gvk.Kind, "List") || strings.HasSuffix(gvk.Kind, "Options") {
			continue
		}
		scope := meta.RESTScopeNamespace
		if clusterScoped[gvk.Kind] {
			scope = meta.RESTScopeRoot
		}
		s.add(gvk, scope)
	}
}

// add maps gvk with a guessed plural.
func (s *ObjectSet) add(gvk schema.GroupVersionKind, scope meta.RESTScope) {
	plural, singular := meta.UnsafeGuessKindToResource(gvk)
	if gvk.Kind == "Endpoints" {
		plural.Resource = "endpoints"
	}
	s.mapper.AddSpecific(gvk, plural, singular, scope)
}

// addCRD maps the kind that o defines, when o is a CustomResourceDefinition.
func (s *ObjectSet) addCRD(o *unstructured.Unstructured) {
	if o.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}) {
		return
	}
	group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
	plural, _, _ := unstructured.NestedString(o.Object, "spec", "names", "plural")
	singular, _, _ := unstructured.NestedString(o.Object, "spec", "names", "singular")
	scopeName, _, _ := unstructured.NestedString(o.Object, "spec", "scope")
	versions, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
	scope := meta.RESTScopeNamespace
	if scopeName == "Cluster" {
		scope = meta.RESTScopeRoot
	}
	if singular == "" {
		singular = strings.ToLower(kind)
	}
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		name, _, _ := unstructured.NestedString(vm, "name")
		if name == "" || kind == "" || plural == "" {
			continue
		}
		gv := schema.GroupVersion{Group: group, Version: name}
		s.mapper.AddSpecific(gv.WithKind(kind), gv.WithResource(plural), gv.WithResource(singular), scope)
	}
}

// moveStringData does what the API server does with a Secret's stringData.
func moveStringData(o *unstructured.Unstructured) {
	sd, ok, _ := unstructured.NestedStringMap(o.Object, "stringData")
	if !ok {
		return
	}
	data, _, _ := unstructured.NestedMap(o.Object, "data")
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range sd {
		data[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	_ = unstructured.SetNestedMap(o.Object, data, "data")
	unstructured.RemoveNestedField(o.Object, "stringData")
}

// Mapping resolves gvk.
func (s *ObjectSet) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	return s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
}

// Get returns the object of m's kind named ns/name, in whatever version it was given.
func (s *ObjectSet) Get(_ context.Context, m *meta.RESTMapping, ns, name string) (*unstructured.Unstructured, error) {
	for _, o := range s.objects {
		if o.GroupVersionKind().GroupKind() == m.GroupVersionKind.GroupKind() && o.GetNamespace() == ns && o.GetName() == name {
			return o, nil
		}
	}
	return nil, nil
}

// List returns the objects of m's kind in ns (every namespace when empty)
// whose labels match selector.
func (s *ObjectSet) List(_ context.Context, m *meta.RESTMapping, ns string, selector labels.Selector) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, o := range s.objects {
		if o.GroupVersionKind().GroupKind() != m.GroupVersionKind.GroupKind() || (ns != "" && o.GetNamespace() != ns) {
			continue
		}
		if selector == nil || selector.Matches(labels.Set(o.GetLabels())) {
			out = append(out, o)
		}
	}
	return out, nil
}

// Objects returns the objects of the set.
func (s *ObjectSet) Objects() []*unstructured.Unstructured { return s.objects }

// LoadObjects reads the objects of YAML and JSON files (.yaml, .yml,
// .json), and of such files below directories, into an ObjectSet.
func LoadObjects(paths ...string) (*ObjectSet, error) {
	var objs []*unstructured.Unstructured
	for _, p := range paths {
		err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			if path != p && !isManifestFile(path) {
				return nil
			}
			got, err := ReadFile(path)
			objs = append(objs, got...)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return NewObjectSet(objs), nil
}

// isManifestFile says whether a file found in a directory holds objects.
func isManifestFile(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// ReadFile reads the objects of one YAML or JSON file.
func ReadFile(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	objs, err := ReadObjects(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return objs, nil
}

// ReadObjects reads the objects of a stream of YAML documents (or JSON),
// flattening Lists. Numbers become int64 or float64, as in objects read
// from an API server.
func ReadObjects(r io.Reader) ([]*unstructured.Unstructured, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var out []*unstructured.Unstructured
	for n := 1; ; n++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		data, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
			continue
		}
		var obj map[string]any
		if err := utiljson.Unmarshal(data, &obj); err != nil {
			return nil, fmt.Errorf("document %d is not an object: %w", n, err)
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("document %d has no kind or apiVersion", n)
		}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return nil, fmt.Errorf("document %d: %w", n, err)
			}
			for i := range list.Items {
				out = append(out, &list.Items[i])
			}
			continue
		}
		out = append(out, u)
	}
}
