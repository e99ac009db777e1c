package health

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	"k8s.io/apiserver/pkg/cel/library"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// CEL limits. The cost limit is the one the Kubernetes API server gives
// one expression of a CRD validation rule; the length bounds what the
// hub's admission compiles for one request.
const (
	celCostLimit        = 1_000_000
	celCheckFrequency   = 100
	maxExpressionLength = 4096
	// cacheSize bounds the compiled expressions a Checker keeps; a fleet
	// has a few, one per replica set that sets one.
	cacheSize = 512
)

// Checker checks ManifestWorks against health checks. It is safe for
// concurrent use, and compiles each expression once.
type Checker struct {
	env *cel.Env

	mu       sync.Mutex
	programs map[string]compiled
}

// compiled is one expression's program, or why it has none.
type compiled struct {
	prg *program
	err error
}

// program is a compiled expression.
type program struct {
	expr    string
	program cel.Program
}

// NewChecker makes a Checker.
func NewChecker() *Checker {
	env, err := cel.NewEnv(
		cel.Variable("manifest", cel.MapType(cel.StringType, cel.StringType)),
		cel.Variable("values", cel.MapType(cel.StringType, cel.DynType)),
		cel.OptionalTypes(),
		cel.DefaultUTCTimeZone(true),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		library.Lists(),
		library.Regex(),
		library.Quantity(),
	)
	if err != nil {
		// The declarations above are fixed: only a broken build gets here.
		panic(fmt.Sprintf("health: CEL environment: %v", err))
	}
	return &Checker{env: env, programs: map[string]compiled{}}
}

// compile compiles expr, or returns it from the cache; an expression must
// yield a bool. The error completes a sentence that begins with the
// expression: "expression X does not compile: ...".
func (c *Checker) compile(expr string) (*program, error) {
	c.mu.Lock()
	got, ok := c.programs[expr]
	c.mu.Unlock()
	if ok {
		return got.prg, got.err
	}
	got.prg, got.err = c.build(expr)
	c.mu.Lock()
	if len(c.programs) >= cacheSize {
		clear(c.programs)
	}
	c.programs[expr] = got
	c.mu.Unlock()
	return got.prg, got.err
}

func (c *Checker) build(expr string) (*program, error) {
	if len(expr) > maxExpressionLength {
		return nil, fmt.Errorf("is %d characters long, over the limit of %d", len(expr), maxExpressionLength)
	}
	ast, issues := c.env.Compile(expr)
	if issues.Err() != nil {
		return nil, fmt.Errorf("does not compile: %s", issues.Err())
	}
	if t := ast.OutputType(); t != cel.BoolType && t != cel.DynType {
		return nil, fmt.Errorf("yields %s, not bool", t)
	}
	prg, err := c.env.Program(ast, cel.CostLimit(celCostLimit), cel.InterruptCheckFrequency(celCheckFrequency))
	if err != nil {
		return nil, fmt.Errorf("cannot be evaluated: %w", err)
	}
	return &program{expr: expr, program: prg}, nil
}

// eval evaluates the expression for one manifest.
func (p *program) eval(manifest map[string]string, values map[string]any) (bool, error) {
	out, _, err := p.program.Eval(map[string]any{"manifest": manifest, "values": values})
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("it yielded %v (%s), not a bool", out.Value(), out.Type().TypeName())
	}
	return b, nil
}

// celManifest is the manifest variable.
func celManifest(rm workv1.ManifestResourceMeta) map[string]string {
	return map[string]string{
		"group": rm.Group, "version": rm.Version, "kind": rm.Kind, "resource": rm.Resource,
		"namespace": rm.Namespace, "name": rm.Name,
	}
}
