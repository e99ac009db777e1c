package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/hub/policy/templates"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
)

// reasonHubTemplateError is the reason of the event on a root whose hub
// templates do not resolve for a cluster.
const reasonHubTemplateError = "HubTemplateError"

// hasHubTemplates reports whether any policy template of root has hub templates.
func hasHubTemplates(root *policyv1.Policy) bool {
	for _, t := range root.Spec.PolicyTemplates {
		if templates.Has(t.ObjectDefinition.Raw) {
			return true
		}
	}
	return false
}

// resolveHubTemplates resolves the hub templates of want, the copy of
// s.root for cluster, in place. A template that does not resolve keeps
// its text and gets templates.HubTemplatesErrorAnnotation, which the
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
	data := templates.Data{
		ManagedClusterName:   cluster,
		ManagedClusterLabels: maps.Clone(mc.Labels),
		PolicyMetadata: map[string]any{
			"name": s.root.Name, "namespace": s.root.Namespace,
			"labels": maps.Clone(s.root.Labels), "annotations": maps.Clone(s.root.Annotations),
		},
	}
	res := &templates.Resolver{Namespace: s.root.Namespace, Reader: s.reader}
	for i := range want.Spec.PolicyTemplates {
		t := &want.Spec.PolicyTemplates[i]
		out, refs, err := res.Resolve(t.ObjectDefinition.Raw, data)
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
		marked, merr := withAnnotation(t.ObjectDefinition.Raw, templates.HubTemplatesErrorAnnotation, msg)
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
	return u.GetAnnotations()[templates.HubTemplatesErrorAnnotation]
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
// per object per reconcile: Secrets are never cached on the hub. It keeps
// the first error that is not NotFound, which makes the reconcile fail
// rather than report a template error.
type objectReader struct {
	ctx        context.Context
	reader     client.Reader
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
	err        error
}

func newObjectReader(ctx context.Context, r client.Reader) *objectReader {
	return &objectReader{ctx: ctx, reader: r, configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
}

// ConfigMap reads ConfigMap ns/name; nil when it does not exist.
func (o *objectReader) ConfigMap(ns, name string) (*corev1.ConfigMap, error) {
	return read(o, o.configMaps, &corev1.ConfigMap{}, ns, name)
}

// secretValues are the values of every Secret read so far, to be
// redacted from messages.
func (o *objectReader) secretValues() *policytemplate.Secrets {
	out := &policytemplate.Secrets{}
	for _, s := range o.secrets {
		if s == nil {
			continue
		}
		for _, v := range s.Data {
			out.Add(v)
		}
		for _, v := range s.StringData {
			out.Add([]byte(v))
		}
	}
	return out
}

// hubTemplateEventNote is the note of the HubTemplateError event of a
// copy: its notes, cut to what the API server takes, pointing at the
// copy's annotation for the whole of each error.
func hubTemplateEventNote(notes string, copy *policyv1.Policy) string {
	return policytemplate.Cap(notes, policytemplate.MessageLimit,
		fmt.Sprintf("the whole error is in the %s annotation of each policy template of Policy %s/%s",
			templates.HubTemplatesErrorAnnotation, copy.Namespace, copy.Name))
}

// Secret reads Secret ns/name; nil when it does not exist.
func (o *objectReader) Secret(ns, name string) (*corev1.Secret, error) {
	return read(o, o.secrets, &corev1.Secret{}, ns, name)
}

func read[T client.Object](o *objectReader, seen map[string]T, obj T, ns, name string) (T, error) {
	key := ns + "/" + name
	if got, ok := seen[key]; ok {
		return got, nil
	}
	var zero T
	err := o.reader.Get(o.ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		seen[key] = zero
		return zero, nil
	case err != nil:
		err = fmt.Errorf("read %s/%s for hub templates: %w", ns, name, err)
		if o.err == nil {
			o.err = err
		}
		return zero, err
	}
	seen[key] = obj
	return obj, nil
}
