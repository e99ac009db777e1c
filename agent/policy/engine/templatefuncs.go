package engine

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/flotilla/internal/policytemplate"
	"github.com/flotilla-io/flotilla/internal/tmplexec"
)

// funcs are the template functions of one resolution.
type funcs struct {
	e *evaluator
	resolution
	read policytemplate.ReadFuncs
}

// funcMap are the functions of managed-cluster templates, as OCM's
// configuration policy controller offers them (policytemplate.HelperFuncs
// and policytemplate.ReadFuncs); perObject adds skipObject. The functions
// read through the evaluator's reader, which records the values of every
// Secret read for redaction.
func (f *funcs) funcMap(perObject bool) tmplexec.FuncMap {
	f.read.Reader = evaluatorReader{f.e}
	m := f.read.Add(policytemplate.HelperFuncs())
	if perObject {
		m["skipObject"] = f.skipObject
	}
	return m
}

// evaluatorReader reads for template functions with the evaluator's
// reader and context.
type evaluatorReader struct{ e *evaluator }

func (r evaluatorReader) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	return r.e.r.Mapping(gvk)
}

func (r evaluatorReader) Get(m *meta.RESTMapping, ns, name string) (*unstructured.Unstructured, error) {
	return r.e.r.Get(r.e.ctx, m, ns, name)
}

func (r evaluatorReader) List(m *meta.RESTMapping, ns string, sel labels.Selector) ([]*unstructured.Unstructured, error) {
	return r.e.r.List(r.e.ctx, m, ns, sel)
}

// ReaderFor adapts r to the template functions' reader, reading with ctx.
func ReaderFor(ctx context.Context, r Reader) policytemplate.ObjectReader {
	return evaluatorReader{&evaluator{ctx: ctx, r: r}}
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
