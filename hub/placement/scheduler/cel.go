package scheduler

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/cel/library"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// CEL limits, as the Kubernetes API server sets them for one expression.
const (
	celCostLimit      = 1_000_000
	celCheckFrequency = 100
	// celCacheSize bounds the compiled expressions kept across schedulings.
	celCacheSize = 1024
)

// celProgram is one compiled celExpression.
type celProgram struct {
	expr    string
	program cel.Program
}

// The CEL environment: the variable managedCluster (the ManagedCluster as
// its JSON form), OCM's managedCluster.scores(name), and the Kubernetes
// libraries that CRD validation rules also offer.
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("managedCluster", cel.MapType(cel.StringType, cel.DynType)),
		cel.Function("scores",
			cel.MemberOverload("managedcluster_scores_string", []*cel.Type{cel.DynType, cel.StringType}, cel.ListType(cel.DynType),
				cel.BinaryBinding(clusterScores))),
		cel.DefaultUTCTimeZone(true),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		library.Lists(),
		library.Regex(),
		library.Quantity(),
		library.SemverLib(),
		library.URLs(),
	)
})

var celCache = struct {
	sync.Mutex
	programs map[string]*celProgram
}{programs: map[string]*celProgram{}}

// compileCEL compiles expr, or returns it from the cache. Expressions must
// yield a bool.
func compileCEL(expr string) (*celProgram, error) {
	celCache.Lock()
	prg, ok := celCache.programs[expr]
	celCache.Unlock()
	if ok {
		return prg, nil
	}
	env, err := celEnv()
	if err != nil {
		return nil, fmt.Errorf("internal error: CEL environment: %w", err)
	}
	ast, issues := env.Compile(expr)
	if issues.Err() != nil {
		return nil, fmt.Errorf("does not compile: %s", issues.Err())
	}
	if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
		return nil, fmt.Errorf("yields %s, not bool", ast.OutputType())
	}
	program, err := env.Program(ast, cel.CostLimit(celCostLimit), cel.InterruptCheckFrequency(celCheckFrequency))
	if err != nil {
		return nil, fmt.Errorf("cannot be evaluated: %w", err)
	}
	prg = &celProgram{expr: expr, program: program}
	celCache.Lock()
	if len(celCache.programs) >= celCacheSize {
		clear(celCache.programs)
	}
	celCache.programs[expr] = prg
	celCache.Unlock()
	return prg, nil
}

// celCluster is the managedCluster variable: the ManagedCluster as a CEL
// map, which also carries the cluster's scores for scores().
type celCluster struct {
	traits.Mapper
	scores map[string]*clusterv1alpha1.AddOnPlacementScore
	now    time.Time
}

// newCELCluster converts a cluster for CEL evaluation.
func newCELCluster(c *clusterv1.ManagedCluster, scores map[string]*clusterv1alpha1.AddOnPlacementScore, now time.Time) (*celCluster, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
	if err != nil {
		return nil, err
	}
	obj["apiVersion"], obj["kind"] = clusterv1.GroupVersion.String(), "ManagedCluster"
	return &celCluster{Mapper: types.NewStringInterfaceMap(types.DefaultTypeAdapter, obj), scores: scores, now: now}, nil
}

// clusterScores is managedCluster.scores(name): the scores of the
// cluster's AddOnPlacementScore of that name, as a list of {name, value}; an
// empty list when there is none or its validUntil has passed.
func clusterScores(cluster, name ref.Val) ref.Val {
	c, ok := cluster.(*celCluster)
	if !ok {
		return types.NewErr("scores() can only be called on managedCluster")
	}
	n, ok := name.Value().(string)
	if !ok {
		return types.NewErr("scores() takes the name of an AddOnPlacementScore")
	}
	items := []ref.Val{}
	if s := c.scores[n]; s != nil && !expired(s, c.now) {
		for _, item := range s.Status.Scores {
			items = append(items, types.NewStringInterfaceMap(types.DefaultTypeAdapter, map[string]any{
				"name": item.Name, "value": int64(item.Value),
			}))
		}
	}
	return types.NewDynamicList(types.DefaultTypeAdapter, items)
}

// errNotBool is an expression that yielded something other than a bool.
var errNotBool = errors.New("the expression did not yield a bool")

// eval evaluates one expression for one cluster.
func (p *celProgram) eval(c *celCluster) (bool, error) {
	out, _, err := p.program.Eval(map[string]any{"managedCluster": c})
	if err != nil {
		return false, fmt.Errorf("%q: %w", p.expr, err)
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("%q: %w", p.expr, errNotBool)
	}
	return b, nil
}

// usesScores says whether a CEL expression may call scores().
func usesScores(expr string) bool {
	return strings.Contains(expr, "scores")
}
