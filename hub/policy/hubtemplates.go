package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
)

// reasonHubTemplateError is the reason of the event on a root whose hub
// templates do not resolve for a cluster.
const reasonHubTemplateError = "HubTemplateError"

// hasHubTemplates reports whether any policy template of root has hub templates.
func hasHubTemplates(root *policyv1.Policy) bool {
	for _, t := range root.Spec.PolicyTemplates {
		if policytemplate.HasHubTemplates(t.ObjectDefinition.Raw) {
			return true
		}
	}
	return false
}

// resolveHubTemplates resolves the hub templates of want, the copy of
// s.root for cluster, in place. A template that does not resolve keeps
// its text and gets policytemplate.HubTemplatesErrorAnnotation, which the
// agent reports; notes are the errors the copy cur did not carry yet, for
// Warning events once the copy is written. An error reading the hub is
// returned, to be retried.
func (r *Reconciler) resolveHubTemplates(ctx context.Context, s *scope, want, cur *policyv1.Policy, cluster string) (notes []string, _ error) {
	if !s.hubTemplates {
		return nil, nil
	}
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: cluster}, mc); client.IgnoreNotFound(err) != nil {
		return nil, fmt.Errorf("get ManagedCluster %s for the hub templates of %s: %w", cluster, rootName(s.root.Namespace, s.root.Name), err)
	}
	data := policytemplate.HubData{
		ManagedClusterName:   cluster,
		ManagedClusterLabels: maps.Clone(mc.Labels),
		PolicyMetadata: map[string]any{
			"name": s.root.Name, "namespace": s.root.Namespace,
			"labels": maps.Clone(s.root.Labels), "annotations": maps.Clone(s.root.Annotations),
		},
	}
	s.reader.mapper = r.Client.RESTMapper()
	res := &policytemplate.HubResolver{Namespace: s.root.Namespace, Reader: s.reader}
	for i := range want.Spec.PolicyTemplates {
		t := &want.Spec.PolicyTemplates[i]
		out, refs, _, err := res.Resolve(t.ObjectDefinition.Raw, data)
		s.refs = append(s.refs, refs...)
		if s.reader.err != nil {
			return nil, s.reader.err
		}
		if err == nil {
			t.ObjectDefinition.Raw = out
			continue
		}
		// The error may quote what a function was given, and that may come
		// from a Secret: the copy and the events never carry it.
		msg := policytemplate.Cap(s.reader.secretValues().Redact(err.Error()), policytemplate.DetailLimit, "")
		marked, merr := withAnnotation(t.ObjectDefinition.Raw, policytemplate.HubTemplatesErrorAnnotation, msg)
		if merr != nil {
			return nil, fmt.Errorf("mark policy template %d of %s with its hub template error: %w", i, rootName(s.root.Namespace, s.root.Name), merr)
		}
		t.ObjectDefinition.Raw = marked
		if previousHubTemplateError(cur, i) != msg {
			notes = append(notes, fmt.Sprintf("policy template %d for cluster %s: %s", i, cluster, msg))
		}
	}
	return notes, nil
}

// previousHubTemplateError is the hub template error that template i of
// the copy cur carries, if any.
func previousHubTemplateError(cur *policyv1.Policy, i int) string {
	if cur == nil || i >= len(cur.Spec.PolicyTemplates) {
		return ""
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(cur.Spec.PolicyTemplates[i].ObjectDefinition.Raw, &u.Object); err != nil {
		return ""
	}
	return u.GetAnnotations()[policytemplate.HubTemplatesErrorAnnotation]
}

// withAnnotation returns the object raw with annotation key set to value.
func withAnnotation(raw []byte, key, value string) ([]byte, error) {
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(raw, &u.Object); err != nil {
		return nil, err
	}
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = value
	u.SetAnnotations(a)
	return json.Marshal(u.Object)
}

// objectReader reads what hub templates refer to from the API server, once
// per object (or list) per reconcile: Secrets are never cached on the hub.
// It keeps the first error that is not NotFound, which makes the reconcile
// fail rather than report a template error, and the values of every
// Secret read, to be redacted from messages.
type objectReader struct {
	ctx     context.Context
	reader  client.Reader
	mapper  meta.RESTMapper
	objects map[string]*unstructured.Unstructured
	lists   map[string][]*unstructured.Unstructured
	secrets policytemplate.Secrets
	err     error
}

func newObjectReader(ctx context.Context, r client.Reader) *objectReader {
	return &objectReader{ctx: ctx, reader: r, objects: map[string]*unstructured.Unstructured{}, lists: map[string][]*unstructured.Unstructured{}}
}

// Mapping resolves gvk with the hub's RESTMapper.
func (o *objectReader) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := o.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && !meta.IsNoMatchError(err) {
		o.fail(err)
	}
	return m, err
}

// Get reads one object; nil when it does not exist.
func (o *objectReader) Get(m *meta.RESTMapping, ns, name string) (*unstructured.Unstructured, error) {
	key := m.Resource.String() + "/" + ns + "/" + name
	if got, ok := o.objects[key]; ok {
		return got, nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(m.GroupVersionKind)
	err := o.reader.Get(o.ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		obj = nil
	case err != nil:
		o.fail(fmt.Errorf("read %s %s/%s for hub templates: %w", m.GroupVersionKind.Kind, ns, name, err))
		return nil, o.err
	default:
		o.record(m, obj)
	}
	o.objects[key] = obj
	return obj, nil
}

// List reads the objects of a kind in ns whose labels match sel.
func (o *objectReader) List(m *meta.RESTMapping, ns string, sel labels.Selector) ([]*unstructured.Unstructured, error) {
	key := m.Resource.String() + "/" + ns + "?" + sel.String()
	if got, ok := o.lists[key]; ok {
		return got, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(m.GroupVersionKind.GroupVersion().WithKind(m.GroupVersionKind.Kind + "List"))
	if err := o.reader.List(o.ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		o.fail(fmt.Errorf("list %s in %q for hub templates: %w", m.GroupVersionKind.Kind, ns, err))
		return nil, o.err
	}
	out := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
		o.record(m, out[i])
	}
	o.lists[key] = out
	return out, nil
}

func (o *objectReader) fail(err error) {
	if o.err == nil {
		o.err = err
	}
}

// record keeps the values of a Secret read, to be redacted.
func (o *objectReader) record(m *meta.RESTMapping, obj *unstructured.Unstructured) {
	if m.GroupVersionKind.Group != "" || m.GroupVersionKind.Kind != "Secret" {
		return
	}
	data, _, _ := unstructured.NestedMap(obj.Object, "data")
	for _, v := range data {
		if v, ok := v.(string); ok {
			o.secrets.AddEncoded(v)
		}
	}
	stringData, _, _ := unstructured.NestedMap(obj.Object, "stringData")
	for _, v := range stringData {
		if v, ok := v.(string); ok {
			o.secrets.Add([]byte(v))
		}
	}
}

// secretValues are the values of every Secret read so far, to be
// redacted from messages.
func (o *objectReader) secretValues() *policytemplate.Secrets { return &o.secrets }

// hubTemplateEventNote is the note of the HubTemplateError event of a
// copy: its notes, cut to what the API server takes, pointing at the
// copy's annotation for the whole of each error.
func hubTemplateEventNote(notes string, copy *policyv1.Policy) string {
	return policytemplate.Cap(notes, policytemplate.MessageLimit,
		fmt.Sprintf("the whole error is in the %s annotation of each policy template of Policy %s/%s",
			policytemplate.HubTemplatesErrorAnnotation, copy.Namespace, copy.Name))
}
