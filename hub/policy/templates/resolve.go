package templates

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/internal/policytemplate"
)

// HubTemplatesErrorAnnotation is set on a policy template whose hub
// templates did not resolve; its value is the error. OCM uses the same
// annotation, and its agents report it as a template-error.
const HubTemplatesErrorAnnotation = policytemplate.HubTemplatesErrorAnnotation

// delims are those of hub templates.
var delims = policytemplate.HubDelims

// maxQuotedTemplate is how much of a failing template its error quotes.
const maxQuotedTemplate = 300

// Kind of object a template reads.
type Kind string

// Kinds that hub templates read.
const (
	ConfigMap Kind = "ConfigMap"
	Secret    Kind = "Secret"
)

// Ref is an object a resolution read, found or not.
type Ref struct {
	Kind            Kind
	Namespace, Name string
}

// Reader reads the objects hub templates refer to. A missing object is
// (nil, nil).
type Reader interface {
	ConfigMap(namespace, name string) (*corev1.ConfigMap, error)
	Secret(namespace, name string) (*corev1.Secret, error)
}

// Data are what a hub template sees as ".".
type Data struct {
	// ManagedClusterName is the cluster the policy is copied for.
	ManagedClusterName string
	// ManagedClusterLabels are that cluster's labels.
	ManagedClusterLabels map[string]string
	// PolicyMetadata are the name, namespace, labels and annotations of the root policy.
	PolicyMetadata map[string]any
}

// Resolver resolves the hub templates of one root policy.
type Resolver struct {
	// Namespace is the root policy's: the only one templates may read.
	Namespace string
	// Reader reads the objects.
	Reader Reader
}

// Has reports whether raw holds hub templates.
func Has(raw []byte) bool { return bytes.Contains(raw, []byte("{{hub")) }

// Resolve resolves the hub templates of the object definition raw (JSON)
// with data, and returns the result as JSON and the objects it read.
// Without hub templates raw is returned as it is.
func (r *Resolver) Resolve(raw []byte, data Data) (out []byte, refs []Ref, err error) {
	if !Has(raw) {
		return raw, nil, nil
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("failed to resolve the template %s: %w", quote(raw), err)
		}
	}()
	y, err := yaml.JSONToYAML(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("convert the object definition to YAML: %w", err)
	}
	f := &funcs{r: r}
	fm := policytemplate.HelperFuncs()
	maps.Copy(fm, template.FuncMap{"fromConfigMap": f.fromConfigMap, "fromSecret": f.fromSecret})
	tpl, err := template.New("tmpl").Delims(delims.Left, delims.Right).Funcs(fm).Option("missingkey=zero").Parse(delims.Prepare(string(y)))
	if err != nil {
		return nil, nil, err
	}
	var b strings.Builder
	if err := tpl.Execute(&b, data); err != nil {
		return nil, f.refs, err
	}
	j, err := yaml.YAMLToJSON([]byte(b.String()))
	if err != nil {
		return nil, f.refs, fmt.Errorf("the resolved template is not valid YAML: %w", err)
	}
	return j, f.refs, nil
}

// quote is raw compacted, and cut short when long.
func quote(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		b.Reset()
		b.Write(raw)
	}
	s := b.String()
	if len(s) > maxQuotedTemplate {
		s = s[:maxQuotedTemplate] + "..."
	}
	return s
}

// funcs are the functions of one resolution, which record what they read.
type funcs struct {
	r    *Resolver
	refs []Ref
}

// allowed checks that a template reads the policy's namespace; "" means it.
func (f *funcs) allowed(kind Kind, ns, name string) (string, error) {
	if ns == "" {
		ns = f.r.Namespace
	}
	if ns != f.r.Namespace {
		return "", fmt.Errorf("the %s %s/%s is out of reach: hub templates read only the namespace of the policy, %s; "+
			"move the %s there or leave the namespace empty", kind, ns, name, f.r.Namespace, kind)
	}
	f.refs = append(f.refs, Ref{Kind: kind, Namespace: ns, Name: name})
	return ns, nil
}

// fromConfigMap returns the value of key in ConfigMap ns/name.
func (f *funcs) fromConfigMap(ns, name, key string) (string, error) {
	ns, err := f.allowed(ConfigMap, ns, name)
	if err != nil {
		return "", err
	}
	cm, err := f.r.Reader.ConfigMap(ns, name)
	if err != nil {
		return "", err
	}
	if cm == nil {
		return "", fmt.Errorf("failed to get the configmap %s from %s: not found", name, ns)
	}
	return cm.Data[key], nil
}

// fromSecret returns the value of key in Secret ns/name, base64-encoded as
// it is stored, so that it can go into another Secret's data.
func (f *funcs) fromSecret(ns, name, key string) (string, error) {
	ns, err := f.allowed(Secret, ns, name)
	if err != nil {
		return "", err
	}
	s, err := f.r.Reader.Secret(ns, name)
	if err != nil {
		return "", err
	}
	if s == nil {
		return "", fmt.Errorf("failed to get the secret %s from %s: not found", name, ns)
	}
	v, ok := s.Data[key]
	if !ok {
		return "", nil
	}
	return base64.StdEncoding.EncodeToString(v), nil
}
