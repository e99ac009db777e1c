package engine

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"text/template/parse"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
	"github.com/flotilla-io/flotilla/internal/tmplexec"
)

// objectContext is dot of an object template resolved for one object: the
// context variables OCM documents for object templates.
type objectContext struct {
	// ObjectNamespace is the namespace evaluated (namespaced kinds only).
	ObjectNamespace string
	// ObjectName is the name of the object evaluated: the template's own,
	// or that of an object the objectSelector selected.
	ObjectName string
	// Object is that object as on the cluster; nil when it does not exist.
	Object map[string]any
}

// The context variables, and skipObject, as they are named in messages.
const (
	varObjectNamespace = ".ObjectNamespace"
	varObjectName      = ".ObjectName"
	varObject          = ".Object"
	funcSkipObject     = "skipObject"
)

// contextVars are the context variables (and skipObject) a template uses,
// in the order above.
type contextVars []string

func (v contextVars) String() string { return strings.Join(v, ", ") }

func (v contextVars) has(name string) bool {
	for _, n := range v {
		if n == name {
			return true
		}
	}
	return false
}

// definitionContextVars are the context variables the Go templates of an
// object definition use; none when it has no templates or they do not
// parse (the once-only resolution then reports why).
func definitionContextVars(raw []byte) contextVars {
	if !bytes.Contains(raw, []byte("{{")) {
		return nil
	}
	y, err := yaml.JSONToYAML(raw)
	if err != nil {
		return nil
	}
	vars, _ := contextVarsOf(string(y))
	return vars
}

// contextVarsOf parses text as execute does and returns the context
// variables it reads from the top-level dot (or $), and whether it calls
// skipObject. Fields read inside range and with are of another dot and
// do not count.
func contextVarsOf(text string) (contextVars, error) {
	if strings.Contains(text, "{{hub") {
		return nil, nil
	}
	tpl, err := tmplexec.Parse("tmpl", policytemplate.ManagedClusterDelims.Prepare(text), (&funcs{}).funcMap(true))
	if err != nil {
		return nil, err
	}
	found := map[string]bool{}
	for _, t := range tpl.Trees() {
		walkNode(t.Root, true, found)
	}
	var out contextVars
	for _, name := range []string{varObjectNamespace, varObjectName, varObject, funcSkipObject} {
		if found[name] {
			out = append(out, name)
		}
	}
	return out, nil
}

// walkNode records in found the context variables n reads; rootDot says
// whether dot is the template's data at n.
func walkNode(n parse.Node, rootDot bool, found map[string]bool) {
	field := func(ident string) {
		switch ident {
		case "ObjectNamespace", "ObjectName", "Object":
			found["."+ident] = true
		}
	}
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walkNode(c, rootDot, found)
		}
	case *parse.ActionNode:
		walkNode(n.Pipe, rootDot, found)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			walkNode(c, rootDot, found)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			walkNode(a, rootDot, found)
		}
	case *parse.ChainNode:
		walkNode(n.Node, rootDot, found)
	case *parse.FieldNode:
		if rootDot {
			field(n.Ident[0])
		}
	case *parse.VariableNode:
		if len(n.Ident) > 1 && n.Ident[0] == "$" {
			field(n.Ident[1])
		}
	case *parse.IdentifierNode:
		if n.Ident == funcSkipObject {
			found[funcSkipObject] = true
		}
	case *parse.IfNode:
		walkBranch(&n.BranchNode, rootDot, rootDot, found)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, rootDot, false, found)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, rootDot, false, found)
	case *parse.TemplateNode:
		walkNode(n.Pipe, rootDot, found)
	}
}

// walkBranch walks an if, range or with: its pipeline and else run with
// the outer dot, its body with bodyRoot.
func walkBranch(b *parse.BranchNode, rootDot, bodyRoot bool, found map[string]bool) {
	walkNode(b.Pipe, rootDot, found)
	walkNode(b.List, bodyRoot, found)
	walkNode(b.ElseList, rootDot, found)
}

// available checks that each context variable vars uses has a value for
// this object template: .ObjectNamespace for a namespaced kind,
// .ObjectName and .Object when the template names its object or selects
// objects with an objectSelector.
func (v contextVars) available(i int, resource string, namespaced, perName bool) error {
	if v.has(varObjectNamespace) && !namespaced {
		return fmt.Errorf("the object template at index [%d] uses .ObjectNamespace, but %s are cluster-scoped: "+
			".ObjectNamespace is set only for namespaced kinds; remove it", i, resource)
	}
	for _, name := range []string{varObjectName, varObject} {
		if v.has(name) && !perName {
			return fmt.Errorf("the object template at index [%d] uses %s, which is set only when the template is resolved per object: "+
				"name the object in metadata.name, or select objects with an objectSelector and leave metadata.name empty or templated", i, name)
		}
	}
	return nil
}

// fixed is s when it holds no template, else "".
func fixed(s string) string {
	if strings.Contains(s, "{{") {
		return ""
	}
	return s
}

// perObject evaluates an object template that uses context variables: it
// is resolved once per object it may apply to, as OCM does. With a name
// (not a template), per namespace for that object; with an objectSelector,
// per object selected in each namespace; otherwise once per namespace,
// after which a resolved name names the object and an empty one makes the
// template unnamed. A namespace left empty or templated comes from the
// namespaceSelector; what the template resolves to must agree with the
// object it was resolved for.
func (e *evaluator) perObject(t *TemplateResult, ot *policyv1.ObjectTemplate, vars contextVars) *TemplateResult {
	var def map[string]any
	if err := utiljson.Unmarshal(ot.ObjectDefinition.Raw, &def); err == nil {
		apiVersion, _ := def["apiVersion"].(string)
		kind, _ := def["kind"].(string)
		if strings.Contains(apiVersion+kind, "{{") {
			return t.templateError(ReasonTemplateError, "the object template at index [%d] uses %s, so its kind and apiVersion must be written out, not templates", t.Index, vars)
		}
	}
	c, tgt, failed := e.decode(t, ot, ot.ObjectDefinition.Raw)
	if failed != nil {
		return failed
	}
	name, ns := fixed(tgt.name), fixed(tgt.ns)
	selector, failed := objectSelector(t, ot, name)
	if failed != nil {
		return failed
	}
	if err := vars.available(t.Index, t.Resource, namespaced(c.mapping), name != "" || selector != nil); err != nil {
		return t.templateError(ReasonTemplateError, "%v", err)
	}
	namespaces, msg := e.templateNamespaces(c.mapping, ns, name, c.gvk.Kind)
	if msg != nil {
		return t.templateError(msg.Reason, "%s", msg.Message)
	}
	compiled, err := e.compileDefinition(ot.ObjectDefinition.Raw, true)
	if err != nil {
		return t.templateError(ReasonTemplateError, "%v", err)
	}
	p := &perObjectCheck{check: c, tpl: compiled, nsFromSelector: ns == ""}
	for _, ns := range namespaces {
		if err := p.namespace(ns, name, selector); err != nil {
			// As for any template, a read that fails is a K8s error.
			reason := ReasonMappingError
			if errors.As(err, new(resolveError)) {
				reason = ReasonTemplateError
			}
			return t.templateError(reason, "%v", err)
		}
	}
	switch {
	case len(t.Objects) > 0:
	case p.skipped > 0:
		t.empty = fmt.Sprintf("All objects of kind %s were skipped by the `skipObject` template function", c.gvk.Kind)
	case selector != nil:
		t.empty = fmt.Sprintf("No objects of kind %s were matched from the policy objectSelector", c.gvk.Kind)
	}
	t.summarize()
	return t
}

// resolveError is an object definition that does not resolve, as opposed
// to a read of the cluster that fails.
type resolveError struct{ error }

func (e resolveError) Unwrap() error { return e.error }

// perObjectCheck checks the objects of an object template resolved per object.
type perObjectCheck struct {
	*check
	// tpl is the object definition, parsed once for all objects.
	tpl *compiled
	// nsFromSelector says that the namespaces are the namespaceSelector's.
	nsFromSelector bool
	// skipped counts the resolutions that called skipObject.
	skipped int
}

// namespace checks the objects in namespace ns ("" for cluster-scoped).
func (p *perObjectCheck) namespace(ns, name string, selector labels.Selector) error {
	ctx, r := p.e.ctx, p.e.r
	if name != "" {
		obj, err := r.Get(ctx, p.mapping, ns, name)
		if err != nil {
			return fmt.Errorf("failed to get %s %s: %w", p.mapping.Resource.Resource, name, err)
		}
		tmpl, ok, err := p.resolve(ns, name, obj)
		if ok {
			p.one(ns, name, obj, tmpl)
		}
		return err
	}
	if selector != nil {
		objs, err := r.List(ctx, p.mapping, ns, selector)
		if err != nil {
			return fmt.Errorf("failed to list %s: %w", p.mapping.Resource.Resource, err)
		}
		sortByName(objs)
		for _, obj := range objs {
			tmpl, ok, err := p.resolve(ns, obj.GetName(), obj)
			if err != nil {
				return err
			}
			if ok {
				p.one(ns, obj.GetName(), obj, tmpl)
			}
		}
		return nil
	}
	tmpl, ok, err := p.resolve(ns, "", nil)
	if err != nil || !ok {
		return err
	}
	// A resolved name names the object; without one the template is unnamed.
	resolved, _ := nameOf(tmpl)
	return p.check.namespace(ns, resolved, nil, tmpl)
}

// resolve resolves the object definition for the object ns/name (name
// empty: for the namespace), which is obj when it exists. ok is false when
// the template skipped the object.
func (p *perObjectCheck) resolve(ns, name string, obj *unstructured.Unstructured) (tmpl map[string]any, ok bool, err error) {
	data := &objectContext{ObjectNamespace: ns, ObjectName: name}
	if obj != nil {
		// Templates cannot change what they read: no copy is needed.
		data.Object = obj.Object
	}
	raw, res, err := p.tpl.resolve(data)
	p.t.Sensitive = p.t.Sensitive || res.sensitive
	if err != nil {
		return nil, false, resolveError{err}
	}
	if res.skipped {
		p.skipped++
		return nil, false, nil
	}
	if err := utiljson.Unmarshal(raw, &tmpl); err != nil || tmpl == nil {
		return nil, false, resolveError{fmt.Errorf("the object definition resolved for %s is not an object: %v", where(ns, name), err)}
	}
	gotName, gotNS := nameOf(tmpl)
	if !namespaced(p.mapping) {
		clearNamespace(tmpl)
	} else if p.nsFromSelector && gotNS != "" && gotNS != ns {
		return nil, false, resolveError{fmt.Errorf("The object definition's namespace must match the result from the namespace selector after template resolution: "+
			"it resolved to %q for namespace %q; leave metadata.namespace empty or resolve it to {{ .ObjectNamespace }}", gotNS, ns)}
	}
	if name != "" && gotName != "" && gotName != name {
		return nil, false, resolveError{fmt.Errorf("The object definition's name must match the result from the object selector after template resolution: "+
			"it resolved to %q for %s; leave metadata.name empty or resolve it to {{ .ObjectName }}", gotName, where(ns, name))}
	}
	if name != "" {
		(&unstructured.Unstructured{Object: tmpl}).SetName(name)
	}
	return tmpl, true, nil
}

// where names an object, or a namespace when name is empty, in messages.
func where(ns, name string) string {
	switch {
	case name == "" && ns == "":
		return "the cluster"
	case name == "":
		return "namespace " + ns
	case ns == "":
		return "object " + name
	}
	return "object " + ns + "/" + name
}
