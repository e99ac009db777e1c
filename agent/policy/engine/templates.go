package engine

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

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
	y, err := policytemplate.JSONToYAML(raw)
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
	j, err := policytemplate.YAMLToJSON([]byte(out))
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
	c.f.resolution, c.f.read.Sensitive = resolution{}, false
	var dot any
	if data != nil {
		dot = data
	}
	var b strings.Builder
	err := c.tpl.Execute(&b, dot)
	c.f.sensitive = c.f.read.Sensitive
	if err != nil {
		return "", c.f.resolution, fmt.Errorf("failed to resolve the template: %w", err)
	}
	return b.String(), c.f.resolution, nil
}
