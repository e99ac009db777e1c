package work

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// wellKnownConditions are the expressions of WellKnownConditions rules, by
// kind and condition: a Job or Pod is Complete once it finished, whether
// it succeeded or failed.
var wellKnownConditions = map[schema.GroupKind]map[string][]string{
	{Group: "batch", Kind: "Job"}: {
		workv1.ManifestComplete: {`has(object.status) && has(object.status.conditions) && object.status.conditions.exists(c, (c.type == "Complete" || c.type == "Failed") && c.status == "True")`},
	},
	{Kind: "Pod"}: {
		workv1.ManifestComplete: {`has(object.status) && has(object.status.phase) && (object.status.phase == "Succeeded" || object.status.phase == "Failed")`},
	},
}

// celCostLimit bounds the work of one expression over one object, so that
// a rule cannot stall the agent.
const celCostLimit = 1_000_000

// celCache compiles CEL expressions once each; works created from one
// template share their rules. Its environment is built on first use: it
// costs about a megabyte that agents whose works have no condition rules
// never need.
type celCache struct {
	envOnce  func() (*cel.Env, error)
	mu       sync.Mutex
	programs map[string]celProgram
}

type celProgram struct {
	program cel.Program
	err     error
}

func newCELCache() *celCache {
	return &celCache{envOnce: sync.OnceValues(newCELEnv), programs: map[string]celProgram{}}
}

// newCELEnv is the environment of condition rules: the object and, for
// messages, the rule's result.
func newCELEnv() (*cel.Env, error) {
	env, err := cel.NewEnv(
		cel.Variable("object", cel.DynType),
		cel.Variable("result", cel.BoolType),
		ext.Strings(), ext.Lists(), ext.Sets(), ext.Math(),
	)
	if err != nil {
		return nil, fmt.Errorf("create the CEL environment: %w", err)
	}
	return env, nil
}

// program compiles expr, which must evaluate to want.
func (c *celCache) program(expr string, want *cel.Type) (cel.Program, error) {
	key := want.String() + "\x00" + expr
	c.mu.Lock()
	p, ok := c.programs[key]
	c.mu.Unlock()
	if ok {
		return p.program, p.err
	}
	env, err := c.envOnce()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	switch {
	case iss.Err() != nil:
		p.err = iss.Err()
	case ast.OutputType() != want && ast.OutputType() != cel.DynType:
		p.err = fmt.Errorf("the expression gives %s, not %s", ast.OutputType(), want)
	default:
		p.program, p.err = env.Program(ast, cel.CostLimit(celCostLimit))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.programs) > 4096 {
		clear(c.programs)
	}
	c.programs[key] = p
	return p.program, p.err
}

// ruleError is why a rule could not be evaluated: invalid (it does not
// compile) or failed (it fails on this object).
type ruleError struct {
	invalid bool
	err     error
}

func (e *ruleError) Error() string { return e.err.Error() }

// evalBool evaluates a boolean expression over obj.
func (c *celCache) evalBool(expr string, obj map[string]any) (bool, error) {
	p, err := c.program(expr, cel.BoolType)
	if err != nil {
		return false, &ruleError{invalid: true, err: fmt.Errorf("%q: %w", expr, err)}
	}
	out, _, err := p.Eval(map[string]any{"object": obj, "result": false})
	if err != nil {
		return false, &ruleError{err: fmt.Errorf("%q: %w", expr, err)}
	}
	b, ok := out.Value().(bool)
	if !ok || out.Type() != types.BoolType {
		return false, &ruleError{err: fmt.Errorf("%q gives %v, not a boolean", expr, out.Type())}
	}
	return b, nil
}

// evalMessage evaluates a string expression over obj and result.
func (c *celCache) evalMessage(expr string, obj map[string]any, result bool) (string, error) {
	p, err := c.program(expr, cel.StringType)
	if err != nil {
		return "", &ruleError{invalid: true, err: fmt.Errorf("messageExpression %q: %w", expr, err)}
	}
	out, _, err := p.Eval(map[string]any{"object": obj, "result": result})
	if err != nil {
		return "", &ruleError{err: fmt.Errorf("messageExpression %q: %w", expr, err)}
	}
	s, ok := out.Value().(string)
	if !ok {
		return "", &ruleError{err: fmt.Errorf("messageExpression %q gives %v, not a string", expr, out.Type())}
	}
	return s, nil
}

// evaluateRules sets the conditions of rules from obj, an object of kind
// gk. A rule that cannot be evaluated sets its condition False, with
// reason ConditionRuleInvalid (it does not compile, or names no valid
// condition type) or ConditionRuleExpressionError (it fails on this
// object); an invalid rule also makes the manifest Degraded, which no
// object can fix. WellKnownConditions rules for kinds that have none set
// nothing.
func (c *celCache) evaluateRules(gk schema.GroupKind, obj map[string]any, rules []workv1.ConditionRule) []metav1.Condition {
	var (
		out     []metav1.Condition
		invalid []string
	)
	for _, rule := range rules {
		if msgs := validation.IsQualifiedName(rule.Condition); len(msgs) > 0 {
			invalid = append(invalid, fmt.Sprintf("condition %q is not a valid condition type: %s", rule.Condition, strings.Join(msgs, "; ")))
			continue
		}
		var exprs []string
		switch rule.Type {
		case workv1.CELConditionExpressionsType:
			exprs = rule.CelExpressions
		case workv1.WellKnownConditionsType:
			if exprs = wellKnownConditions[gk][rule.Condition]; len(exprs) == 0 {
				continue
			}
		default:
			invalid = append(invalid, fmt.Sprintf("condition %s: unknown rule type %q", rule.Condition, rule.Type))
			continue
		}
		cond, err := c.evaluateRule(rule, exprs, obj)
		var re *ruleError
		if errors.As(err, &re) && re.invalid {
			invalid = append(invalid, fmt.Sprintf("condition %s: %v", rule.Condition, err))
		}
		out = setCondition(out, cond)
	}
	if len(invalid) > 0 {
		out = setCondition(out, metav1.Condition{Type: workv1.ManifestDegraded, Status: metav1.ConditionTrue, Reason: workv1.ConditionRuleInvalid,
			Message: "Invalid condition rules: " + strings.Join(invalid, "; ")})
	}
	return out
}

// evaluateRule sets one rule's condition: true when every expression is.
func (c *celCache) evaluateRule(rule workv1.ConditionRule, exprs []string, obj map[string]any) (metav1.Condition, error) {
	cond := metav1.Condition{Type: rule.Condition, Status: metav1.ConditionFalse}
	if len(exprs) == 0 {
		err := &ruleError{invalid: true, err: errors.New("a CEL rule needs celExpressions")}
		cond.Reason, cond.Message = workv1.ConditionRuleInvalid, err.Error()
		return cond, err
	}
	result := true
	for _, expr := range exprs {
		ok, err := c.evalBool(expr, obj)
		if err != nil {
			cond.Reason, cond.Message = workv1.ConditionRuleExpressionError, err.Error()
			if err.(*ruleError).invalid {
				cond.Reason = workv1.ConditionRuleInvalid
			}
			return cond, err
		}
		result = result && ok
	}
	if result {
		cond.Status = metav1.ConditionTrue
	}
	cond.Reason, cond.Message = workv1.ConditionRuleEvaluated, rule.Message
	if rule.MessageExpression != "" {
		msg, err := c.evalMessage(rule.MessageExpression, obj, result)
		if err != nil {
			cond.Reason, cond.Message = workv1.ConditionRuleExpressionError, err.Error()
			return cond, err
		}
		if msg != "" {
			cond.Message = msg
		}
	}
	if cond.Message == "" {
		cond.Message = fmt.Sprintf("%s is %s", rule.Condition, cond.Status)
	}
	return cond, nil
}
