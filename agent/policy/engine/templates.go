package engine

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
	"github.com/flotilla-io/flotilla/internal/tmplexec"
)

// errHubTemplate says that hub templates reached a managed cluster.
var errHubTemplate = errors.New("hub templates ({{hub ... hub}}) are resolved on the hub before a policy reaches a managed cluster; this one was not")

// resolve resolves the Go templates of an object definition, when it has
// any: the JSON is turned into YAML, executed, and turned back, as OCM
// does. The resolution says whether the templates read a Secret.
func (e *evaluator) resolve(raw []byte) ([]byte, resolution, error) {
	if !bytes.Contains(raw, []byte("{{")) {
		return raw, resolution{}, nil
	}
	c, err := e.compileDefinition(raw, false)
	if err != nil {
		return nil, resolution{}, err
	}
	return c.resolve(nil)
}

// compileDefinition parses the Go templates of an object definition, as
// YAML, to be resolved once or (perObject) for each of many objects.
func (e *evaluator) compileDefinition(raw []byte, perObject bool) (*compiled, error) {
	y, err := yaml.JSONToYAML(raw)
	if err != nil {
		return nil, fmt.Errorf("failed to convert the object definition to YAML: %w", err)
	}
	return e.compile(string(y), perObject)
}

// resolve executes an object definition's templates with data as dot and
// turns the YAML it gives back into JSON; nil when the template called
// skipObject.
func (c *compiled) resolve(data *objectContext) ([]byte, resolution, error) {
	out, res, err := c.run(data)
	if err != nil || res.skipped {
		return nil, res, err
	}
	j, err := yaml.YAMLToJSON([]byte(out))
	if err != nil {
		return nil, res, fmt.Errorf("the resolved template is not valid YAML: %w", err)
	}
	return j, res, nil
}

// resolveRaw resolves object-templates-raw into object templates.
func (e *evaluator) resolveRaw(raw string) ([]policyv1.ObjectTemplate, error) {
	if vars, err := contextVarsOf(raw); err == nil && len(vars) > 0 {
		return nil, fmt.Errorf("object-templates-raw uses %s, which is set only while one object template is resolved per object: "+
			"move the object definition into object-templates", vars)
	}
	out, _, err := e.execute(raw)
	if err != nil {
		return nil, err
	}
	var templates []policyv1.ObjectTemplate
	if err := yaml.Unmarshal([]byte(out), &templates); err != nil {
		return nil, fmt.Errorf("object-templates-raw does not resolve to a YAML list of object templates: %w", err)
	}
	return templates, nil
}

// resolution is what one execution of a template did besides its output.
type resolution struct {
	// sensitive: the template read a Secret.
	sensitive bool
	// skipped: the template called skipObject for the object it was
	// resolved for.
	skipped bool
}

// execute runs text as a Go template with the managed-cluster functions.
func (e *evaluator) execute(text string) (string, resolution, error) {
	c, err := e.compile(text, false)
	if err != nil {
		return "", resolution{}, err
	}
	return c.run(nil)
}

// compiled is a template parsed once, to be executed one or more times
// (one at a time: its functions record what each execution did).
type compiled struct {
	tpl *tmplexec.Template
	f   *funcs
}

// compile parses text as a Go template with the managed-cluster
// functions; perObject adds skipObject, which only means something while
// a template is resolved for one object.
func (e *evaluator) compile(text string, perObject bool) (*compiled, error) {
	if strings.Contains(text, "{{hub") {
		return nil, errHubTemplate
	}
	f := &funcs{e: e}
	tpl, err := tmplexec.Parse("tmpl", policytemplate.ManagedClusterDelims.Prepare(text), f.funcMap(perObject))
	if err != nil {
		return nil, fmt.Errorf("failed to parse the template: %w", err)
	}
	return &compiled{tpl: tpl, f: f}, nil
}

// run executes the template with data as dot (nil: no dot).
func (c *compiled) run(data *objectContext) (string, resolution, error) {
	c.f.resolution = resolution{}
	var dot any
	if data != nil {
		dot = data
	}
	var b strings.Builder
	if err := c.tpl.Execute(&b, dot); err != nil {
		return "", c.f.resolution, fmt.Errorf("failed to resolve the template: %w", err)
	}
	return b.String(), c.f.resolution, nil
}

// funcs are the template functions of one resolution.
type funcs struct {
	e *evaluator
	resolution
}

// funcMap are the functions of managed-cluster templates; perObject adds
// skipObject.
func (f *funcs) funcMap(perObject bool) tmplexec.FuncMap {
	m := policytemplate.HelperFuncs()
	m["lookup"] = f.lookup
	m["fromSecret"] = f.fromSecret
	m["fromConfigMap"] = f.fromConfigMap
	m["fromClusterClaim"] = f.fromClusterClaim
	if perObject {
		m["skipObject"] = f.skipObject
	}
	return m
}

// skipObject leaves the object the template is resolved for out of the
// evaluation; with a boolean argument, only when it is true.
func (f *funcs) skipObject(args ...any) (string, error) {
	switch len(args) {
	case 0:
		f.skipped = true
	case 1:
		b, ok := args[0].(bool)
		if !ok {
			return "", fmt.Errorf("skipObject only accepts one optional boolean argument but received %v (%T)", args[0], args[0])
		}
		f.skipped = f.skipped || b
	default:
		return "", fmt.Errorf("skipObject only accepts one optional boolean argument but received %d", len(args))
	}
	return "", nil
}

// get reads one object of kind gvk; nil when it does not exist.
func (f *funcs) get(gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	m, err := f.e.r.Mapping(gvk)
	if err != nil {
		return nil, err
	}
	return f.e.r.Get(f.e.ctx, m, ns, name)
}

// lookup returns the object apiVersion/kind ns/name (an empty map when it
// does not exist), or with an empty name the list of such objects whose
// labels match the selectors.
func (f *funcs) lookup(apiVersion, kind, ns, name string, selectors ...string) (map[string]any, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	gvk := gv.WithKind(kind)
	if gvk.GroupKind() == (schema.GroupKind{Kind: "Secret"}) {
		f.sensitive = true
	}
	if name != "" {
		obj, err := f.get(gvk, ns, name)
		if err != nil || obj == nil {
			return map[string]any{}, err
		}
		return runtime.DeepCopyJSON(obj.Object), nil
	}
	sel, err := labels.Parse(strings.Join(selectors, ","))
	if err != nil {
		return nil, fmt.Errorf("invalid label selector %q: %w", strings.Join(selectors, ","), err)
	}
	m, err := f.e.r.Mapping(gvk)
	if err != nil {
		return nil, err
	}
	objs, err := f.e.r.List(f.e.ctx, m, ns, sel)
	if err != nil {
		return nil, err
	}
	sortByName(objs)
	items := make([]any, len(objs))
	for i, o := range objs {
		items[i] = runtime.DeepCopyJSON(o.Object)
	}
	return map[string]any{"apiVersion": apiVersion, "kind": kind + "List", "items": items}, nil
}

// fromSecret returns the value of key in Secret ns/name, base64-encoded as
// it is stored, so that it can go into another Secret's data.
func (f *funcs) fromSecret(ns, name, key string) (string, error) {
	f.sensitive = true
	obj, err := f.get(schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, ns, name)
	if err != nil {
		return "", err
	}
	if obj == nil {
		return "", fmt.Errorf("failed to get the secret %s from %s: not found", name, ns)
	}
	v, _, _ := unstructured.NestedString(obj.Object, "data", key)
	return v, nil
}

// fromConfigMap returns the value of key in ConfigMap ns/name.
func (f *funcs) fromConfigMap(ns, name, key string) (string, error) {
	obj, err := f.get(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, ns, name)
	if err != nil {
		return "", err
	}
	if obj == nil {
		return "", fmt.Errorf("failed to get the configmap %s from %s: not found", name, ns)
	}
	v, _, _ := unstructured.NestedString(obj.Object, "data", key)
	return v, nil
}

// fromClusterClaim returns the value of ClusterClaim name.
func (f *funcs) fromClusterClaim(name string) (string, error) {
	obj, err := f.get(clusterv1alpha1.SchemeGroupVersion.WithKind("ClusterClaim"), "", name)
	if err != nil {
		return "", err
	}
	if obj == nil {
		return "", fmt.Errorf("failed to get the cluster claim %s: not found", name)
	}
	v, _, _ := unstructured.NestedString(obj.Object, "spec", "value")
	return v, nil
}
