package tmplexec

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/template/parse"
	"unicode"
)

// FuncMap maps names to functions, as text/template's FuncMap: each
// function returns one value, or a value and an error.
type FuncMap = map[string]any

// Template is a parsed template and the templates it defines.
type Template struct {
	name  string
	trees map[string]*parse.Tree
	funcs map[string]reflect.Value
}

// Parse parses text as the template name with the functions funcs (and the
// builtins), as template.New(name).Funcs(funcs).Parse(text) does: the
// same errors for the same text. It panics, as Funcs does, when a
// function is not a function returning one value or a value and an error.
func Parse(name, text string, funcs FuncMap) (*Template, error) {
	t := &Template{name: name, funcs: map[string]reflect.Value{}}
	for fname, fn := range funcs {
		if !validName(fname) {
			panic(fmt.Errorf("function name %q is not a valid identifier", fname))
		}
		v := reflect.ValueOf(fn)
		if v.Kind() != reflect.Func {
			panic("value for " + fname + " not a function")
		}
		if err := checkResults(fname, v.Type()); err != nil {
			panic(err)
		}
		t.funcs[fname] = v
	}
	trees, err := parse.Parse(name, text, "", "", funcs, builtinNames)
	if err != nil {
		return nil, err
	}
	t.trees = trees
	return t, nil
}

// Trees are the parsed templates by name: the template itself and those
// it defines.
func (t *Template) Trees() map[string]*parse.Tree { return t.trees }

// Execute applies the template to data and writes the output to w. An
// error stops the execution; part of the output may have been written.
func (t *Template) Execute(w io.Writer, data any) (err error) {
	value, ok := data.(reflect.Value)
	if !ok {
		value = reflect.ValueOf(data)
	}
	tree := t.trees[t.name]
	s := &state{t: t, name: t.name, tree: tree, w: w, vars: []variable{{"$", value}}}
	defer func() {
		if r := recover(); r != nil {
			switch e := r.(type) {
			case *Error:
				err = e
			case writeFailure:
				err = e.err
			default:
				panic(r)
			}
		}
	}()
	if tree == nil || tree.Root == nil {
		s.fail("%q is an incomplete or empty template", t.name)
	}
	s.walk(value, tree.Root)
	return nil
}

// Error is an error of execution, worded and located as text/template
// words and locates it.
type Error struct {
	// Name is the template executing.
	Name string
	err  error
}

func (e *Error) Error() string { return e.err.Error() }

// Unwrap gives the error of the function that failed, when one did.
func (e *Error) Unwrap() error { return e.err }

// writeFailure carries an error of the writer out of the walk.
type writeFailure struct{ err error }

func validName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r == '_':
		case i == 0 && !unicode.IsLetter(r):
			return false
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			return false
		}
	}
	return true
}

var errorType = reflect.TypeFor[error]()

// checkResults checks that a function of type typ returns one value, or a
// value and an error.
func checkResults(name string, typ reflect.Type) error {
	switch {
	case typ.NumOut() == 1:
		return nil
	case typ.NumOut() == 2 && typ.Out(1) == errorType:
		return nil
	case typ.NumOut() == 2:
		return fmt.Errorf("invalid function signature for %s: second return value should be error; is %s", name, typ.Out(1))
	}
	return fmt.Errorf("function %s has %d return values; should be 1 or 2", name, typ.NumOut())
}

// doublePercent escapes % for a format.
func doublePercent(s string) string { return strings.ReplaceAll(s, "%", "%%") }
