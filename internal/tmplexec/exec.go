package tmplexec

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/template/parse"
)

// maxDepth bounds templates invoking templates, so that a recursive one
// fails instead of overflowing the stack.
const maxDepth = 100000

// state is one execution.
type state struct {
	t     *Template
	name  string      // the template executing
	tree  *parse.Tree // its tree
	w     io.Writer
	node  parse.Node // where the execution is, for errors
	vars  []variable // variables in scope, innermost last
	depth int
}

type variable struct {
	name  string
	value reflect.Value
}

// control is what a walk asks of the range around it.
type control int

const (
	next control = iota
	breakLoop
	continueLoop
)

// noFinal is the final argument of the first command of a pipeline: there
// is none.
type noFinal struct{}

var (
	missing          = reflect.ValueOf(noFinal{})
	reflectValueType = reflect.TypeFor[reflect.Value]()
	stringerType     = reflect.TypeFor[fmt.Stringer]()
	invalid          reflect.Value
)

func isMissing(v reflect.Value) bool { return v.IsValid() && v.Type() == missing.Type() }

// fail stops the execution with an error located at the current node.
func (s *state) fail(format string, args ...any) {
	name := doublePercent(s.name)
	if s.node == nil || s.tree == nil {
		format = fmt.Sprintf("template: %s: %s", name, format)
	} else {
		location, context := s.tree.ErrorContext(s.node)
		format = fmt.Sprintf("template: %s: executing %q at <%s>: %s", location, name, doublePercent(context), format)
	}
	panic(&Error{Name: s.name, err: fmt.Errorf(format, args...)})
}

func (s *state) at(n parse.Node) { s.node = n }

func (s *state) mark() int    { return len(s.vars) }
func (s *state) pop(mark int) { s.vars = s.vars[:mark] }
func (s *state) push(name string, v reflect.Value) {
	s.vars = append(s.vars, variable{name, v})
}

func (s *state) lookupVar(name string) int {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			return i
		}
	}
	s.fail("undefined variable: %s", name)
	return -1
}

func (s *state) assign(name string, v reflect.Value) { s.vars[s.lookupVar(name)].value = v }

func (s *state) varValue(name string) reflect.Value { return s.vars[s.lookupVar(name)].value }

// walk executes node with dot.
func (s *state) walk(dot reflect.Value, node parse.Node) control {
	s.at(node)
	switch n := node.(type) {
	case *parse.ActionNode:
		// Variables declared here live until the end of the enclosing
		// block; an action that declares prints nothing.
		v := s.evalPipeline(dot, n.Pipe)
		if len(n.Pipe.Decl) == 0 {
			s.print(n, v)
		}
	case *parse.BreakNode:
		return breakLoop
	case *parse.ContinueNode:
		return continueLoop
	case *parse.CommentNode:
	case *parse.IfNode:
		return s.walkBranch(false, dot, &n.BranchNode)
	case *parse.WithNode:
		return s.walkBranch(true, dot, &n.BranchNode)
	case *parse.ListNode:
		for _, c := range n.Nodes {
			if ctl := s.walk(dot, c); ctl != next {
				return ctl
			}
		}
	case *parse.RangeNode:
		s.walkRange(dot, n)
	case *parse.TemplateNode:
		s.walkTemplate(dot, n)
	case *parse.TextNode:
		if _, err := s.w.Write(n.Text); err != nil {
			panic(writeFailure{err})
		}
	default:
		s.fail("unknown node: %s", node)
	}
	return next
}

// walkBranch executes an if (with false) or a with.
func (s *state) walkBranch(with bool, dot reflect.Value, b *parse.BranchNode) control {
	defer s.pop(s.mark())
	v := s.evalPipeline(dot, b.Pipe)
	truth, ok := isTrue(concrete(v))
	if !ok {
		s.fail("if/with can't use %v", v)
	}
	switch {
	case truth && with:
		return s.walk(v, b.List)
	case truth:
		return s.walk(dot, b.List)
	case b.ElseList != nil:
		return s.walk(dot, b.ElseList)
	}
	return next
}

// isTrue says whether v is true for if, with, and, or and not: not the
// zero value of its type; ok is false for a value without truth.
func isTrue(v reflect.Value) (truth, ok bool) {
	if !v.IsValid() {
		return false, true
	}
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() > 0, true
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() != 0, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() != 0, true
	case reflect.Float32, reflect.Float64:
		return v.Float() != 0, true
	case reflect.Complex64, reflect.Complex128:
		return v.Complex() != 0, true
	case reflect.Chan, reflect.Func, reflect.Pointer, reflect.UnsafePointer, reflect.Interface:
		return !v.IsNil(), true
	case reflect.Struct:
		return true, true
	}
	return false, false
}

func (s *state) walkRange(dot reflect.Value, r *parse.RangeNode) {
	s.at(r)
	defer s.pop(s.mark())
	v, _ := deref(s.evalPipeline(dot, r.Pipe))
	mark := s.mark()
	decl := r.Pipe.Decl
	// one runs the body for one element; false stops the loop.
	one := func(key, elem reflect.Value) bool {
		switch {
		case len(decl) == 0:
		case r.Pipe.IsAssign && len(decl) > 1:
			s.assign(decl[0].Ident[0], key)
			s.assign(decl[1].Ident[0], elem)
		case r.Pipe.IsAssign:
			s.assign(decl[0].Ident[0], elem)
		case len(decl) > 1:
			// The pipeline pushed the index's variable, then the element's.
			s.vars[len(s.vars)-1].value = elem
			s.vars[len(s.vars)-2].value = key
		default:
			s.vars[len(s.vars)-1].value = elem
		}
		ctl := s.walk(elem, r.List)
		s.pop(mark)
		return ctl != breakLoop
	}
	ran := false
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if len(decl) > 1 {
			s.fail("can't use %v to iterate over more than one variable", v)
		}
		for i := int64(0); i < v.Int(); i++ {
			ran = true
			e := reflect.New(v.Type()).Elem()
			e.SetInt(i)
			if !one(invalid, e) {
				break
			}
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if len(decl) > 1 {
			s.fail("can't use %v to iterate over more than one variable", v)
		}
		for i := uint64(0); i < v.Uint(); i++ {
			ran = true
			e := reflect.New(v.Type()).Elem()
			e.SetUint(i)
			if !one(invalid, e) {
				break
			}
		}
	case reflect.Array, reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			ran = true
			if !one(reflect.ValueOf(i), v.Index(i)) {
				break
			}
		}
	case reflect.Map:
		for _, k := range sortedKeys(v) {
			ran = true
			if !one(k, v.MapIndex(k)) {
				break
			}
		}
	case reflect.Chan:
		if v.IsNil() {
			break
		}
		if v.Type().ChanDir() == reflect.SendDir {
			s.fail("range over send-only channel %v", v)
		}
		for i := 0; ; i++ {
			e, ok := v.Recv()
			if !ok {
				break
			}
			ran = true
			if !one(reflect.ValueOf(i), e) {
				break
			}
		}
	case reflect.Invalid:
		// nil: as an empty map.
	default:
		s.fail("range can't iterate over %v", v)
	}
	if !ran && r.ElseList != nil {
		s.walk(dot, r.ElseList)
	}
}

func (s *state) walkTemplate(dot reflect.Value, n *parse.TemplateNode) {
	s.at(n)
	tree := s.t.trees[n.Name]
	if tree == nil {
		s.fail("template %q not defined", n.Name)
	}
	if s.depth == maxDepth {
		s.fail("exceeded maximum template depth (%v)", maxDepth)
	}
	dot = s.evalPipeline(dot, n.Pipe)
	inner := *s
	inner.depth++
	inner.name, inner.tree = n.Name, tree
	// Templates see no variables but their own $.
	inner.vars = []variable{{"$", dot}}
	inner.walk(dot, tree.Root)
}

// evalPipeline evaluates a pipeline, each command's value being the last
// argument of the next, and declares or assigns its variables.
func (s *state) evalPipeline(dot reflect.Value, p *parse.PipeNode) reflect.Value {
	if p == nil {
		return invalid
	}
	s.at(p)
	v := missing
	for _, c := range p.Cmds {
		v = s.evalCommand(dot, c, v)
		if v.Kind() == reflect.Interface && v.Type().NumMethod() == 0 {
			v = v.Elem()
		}
	}
	for _, d := range p.Decl {
		if p.IsAssign {
			s.assign(d.Ident[0], v)
		} else {
			s.push(d.Ident[0], v)
		}
	}
	return v
}

// noArgs fails when a value that is not a function is given arguments.
func (s *state) noArgs(args []parse.Node, final reflect.Value) {
	if len(args) > 1 || !isMissing(final) {
		s.fail("can't give argument to non-function %s", args[0])
	}
}

func (s *state) evalCommand(dot reflect.Value, c *parse.CommandNode, final reflect.Value) reflect.Value {
	first := c.Args[0]
	switch n := first.(type) {
	case *parse.FieldNode:
		return s.evalFieldNode(dot, n, c.Args, final)
	case *parse.ChainNode:
		return s.evalChain(dot, n, c.Args, final)
	case *parse.IdentifierNode:
		return s.evalFunction(dot, n, c, c.Args, final)
	case *parse.PipeNode:
		s.noArgs(c.Args, final)
		return s.evalPipeline(dot, n)
	case *parse.VariableNode:
		return s.evalVariable(dot, n, c.Args, final)
	}
	s.at(first)
	s.noArgs(c.Args, final)
	switch n := first.(type) {
	case *parse.BoolNode:
		return reflect.ValueOf(n.True)
	case *parse.DotNode:
		return dot
	case *parse.NilNode:
		s.fail("nil is not a command")
	case *parse.NumberNode:
		return s.number(n)
	case *parse.StringNode:
		return reflect.ValueOf(n.Text)
	}
	s.fail("can't evaluate command %q", first)
	return invalid
}

// number is the value of a number written where no type is expected: its
// spelling decides, as for a Go constant (complex, float, else int).
func (s *state) number(n *parse.NumberNode) reflect.Value {
	s.at(n)
	floatSpelling := !(len(n.Text) > 2 && n.Text[0] == '0' && (n.Text[1] == 'x' || n.Text[1] == 'X') && !strings.ContainsAny(n.Text, "pP")) &&
		!strings.HasPrefix(n.Text, "'") && strings.ContainsAny(n.Text, ".eEpP")
	switch {
	case n.IsComplex:
		return reflect.ValueOf(n.Complex128)
	case n.IsFloat && floatSpelling:
		return reflect.ValueOf(n.Float64)
	case n.IsInt:
		i := int(n.Int64)
		if int64(i) != n.Int64 {
			s.fail("%s overflows int", n.Text)
		}
		return reflect.ValueOf(i)
	case n.IsUint:
		s.fail("%s overflows int", n.Text)
	}
	return invalid
}

func (s *state) evalFieldNode(dot reflect.Value, f *parse.FieldNode, args []parse.Node, final reflect.Value) reflect.Value {
	s.at(f)
	return s.evalFields(dot, dot, f, f.Ident, args, final)
}

func (s *state) evalChain(dot reflect.Value, c *parse.ChainNode, args []parse.Node, final reflect.Value) reflect.Value {
	s.at(c)
	if len(c.Field) == 0 {
		s.fail("internal error: no fields in evalChainNode")
	}
	if c.Node.Type() == parse.NodeNil {
		s.fail("indirection through explicit nil in %s", c)
	}
	v := s.evalArg(dot, nil, c.Node)
	return s.evalFields(dot, v, c, c.Field, args, final)
}

func (s *state) evalVariable(dot reflect.Value, n *parse.VariableNode, args []parse.Node, final reflect.Value) reflect.Value {
	s.at(n)
	v := s.varValue(n.Ident[0])
	if len(n.Ident) == 1 {
		s.noArgs(args, final)
		return v
	}
	return s.evalFields(dot, v, n, n.Ident[1:], args, final)
}

// evalFields walks .A.B.C from v; the last field gets args and final
// (and refuses them: fields are not functions).
func (s *state) evalFields(dot, v reflect.Value, n parse.Node, idents []string, args []parse.Node, final reflect.Value) reflect.Value {
	for _, id := range idents[:len(idents)-1] {
		v = s.field(id, nil, missing, v)
	}
	return s.field(idents[len(idents)-1], args, final, v)
}

// field is name of v: a struct field or a map entry. Methods are not
// looked up (see the package documentation).
func (s *state) field(name string, args []parse.Node, final, v reflect.Value) reflect.Value {
	if !v.IsValid() {
		return invalid
	}
	typ := v.Type()
	v, isNil := deref(v)
	if v.Kind() == reflect.Interface && isNil {
		s.fail("nil pointer evaluating %s.%s", typ, name)
	}
	hasArgs := len(args) > 1 || !isMissing(final)
	switch v.Kind() {
	case reflect.Struct:
		if sf, ok := v.Type().FieldByName(name); ok {
			fv, err := v.FieldByIndexErr(sf.Index)
			if !sf.IsExported() {
				s.fail("%s is an unexported field of struct type %s", name, typ)
			}
			if err != nil {
				s.fail("%v", err)
			}
			if hasArgs {
				s.fail("%s has arguments but cannot be invoked as function", name)
			}
			return fv
		}
	case reflect.Map:
		key := reflect.ValueOf(name)
		if key.Type().AssignableTo(v.Type().Key()) {
			if hasArgs {
				s.fail("%s is not a method but has arguments", name)
			}
			return v.MapIndex(key)
		}
	case reflect.Pointer:
		if et := v.Type().Elem(); et.Kind() == reflect.Struct {
			if _, ok := et.FieldByName(name); !ok {
				break
			}
		}
		if isNil {
			s.fail("nil pointer evaluating %s.%s", typ, name)
		}
	}
	s.fail("can't evaluate field %s in type %s", name, typ)
	return invalid
}

func (s *state) evalFunction(dot reflect.Value, n *parse.IdentifierNode, node parse.Node, args []parse.Node, final reflect.Value) reflect.Value {
	s.at(n)
	fn, builtin := s.t.funcs[n.Ident], false
	if !fn.IsValid() {
		fn, builtin = builtins[n.Ident], true
	}
	if !fn.IsValid() {
		s.fail("%q is not a defined function", n.Ident)
	}
	return s.call(dot, fn, builtin, node, n.Ident, args, final)
}

// call calls fn (named name) with the arguments args[1:] and, when
// present, final, converted to its parameters' types.
func (s *state) call(dot, fn reflect.Value, builtin bool, node parse.Node, name string, args []parse.Node, final reflect.Value) reflect.Value {
	if args != nil {
		args = args[1:]
	}
	typ := fn.Type()
	n := len(args)
	if !isMissing(final) {
		n++
	}
	fixed := len(args)
	if typ.IsVariadic() {
		fixed = typ.NumIn() - 1
		if n < fixed {
			s.fail("wrong number of args for %s: want at least %d got %d", name, typ.NumIn()-1, len(args))
		}
	} else if n != typ.NumIn() {
		s.fail("wrong number of args for %s: want %d got %d", name, typ.NumIn(), n)
	}
	if err := checkResults(name, typ); err != nil {
		s.fail("%v", err)
	}
	if builtin && (name == "and" || name == "or") {
		return s.andOr(dot, name == "or", args, final)
	}
	argv := make([]reflect.Value, n)
	i := 0
	for ; i < fixed && i < len(args); i++ {
		argv[i] = s.evalArg(dot, typ.In(i), args[i])
	}
	if typ.IsVariadic() {
		et := typ.In(typ.NumIn() - 1).Elem()
		for ; i < len(args); i++ {
			argv[i] = s.evalArg(dot, et, args[i])
		}
	}
	if !isMissing(final) {
		pt := typ.In(typ.NumIn() - 1)
		if typ.IsVariadic() {
			if n-1 < fixed {
				pt = typ.In(n - 1)
			} else {
				pt = pt.Elem()
			}
		}
		argv[i] = s.check(final, pt)
	}
	if builtin && name == "call" {
		callee := ""
		if len(args) == 0 {
			callee = final.String()
		} else {
			callee = args[0].String()
		}
		argv = append([]reflect.Value{reflect.ValueOf(callee)}, argv...)
		fn = reflect.ValueOf(callFunc)
	}
	v, err := invoke(fn, argv)
	if err != nil {
		s.at(node)
		s.fail("error calling %s: %w", name, err)
	}
	return unwrapValue(v)
}

// andOr evaluates and (or with or set) lazily: the first argument false
// (true) is the value, else the last.
func (s *state) andOr(dot reflect.Value, or bool, args []parse.Node, final reflect.Value) reflect.Value {
	var v reflect.Value
	for _, a := range args {
		v = s.evalArg(dot, reflectValueType, a).Interface().(reflect.Value)
		if truthOf(v) == or {
			return v
		}
	}
	if !isMissing(final) {
		v = unwrapValue(s.check(final, reflectValueType))
	}
	return v
}

func unwrapValue(v reflect.Value) reflect.Value {
	if v.Type() == reflectValueType {
		return v.Interface().(reflect.Value)
	}
	return v
}

// invoke calls fn; a panic of fn is its error.
func invoke(fn reflect.Value, argv []reflect.Value) (v reflect.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", r)
			}
		}
	}()
	out := fn.Call(argv)
	if len(out) == 2 && !out[1].IsNil() {
		return out[0], out[1].Interface().(error)
	}
	return out[0], nil
}

// nilable says whether an untyped nil can be a value of typ.
func nilable(typ reflect.Type) bool {
	switch typ.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice:
		return true
	case reflect.Struct:
		return typ == reflectValueType
	}
	return false
}

// check makes v a value of typ (nil typ: any type), or fails.
func (s *state) check(v reflect.Value, typ reflect.Type) reflect.Value {
	if !v.IsValid() {
		if typ == nil {
			return reflect.ValueOf(nil)
		}
		if nilable(typ) {
			return reflect.Zero(typ)
		}
		s.fail("invalid value; expected %s", typ)
	}
	if typ == reflectValueType && v.Type() != typ {
		return reflect.ValueOf(v)
	}
	if typ == nil || v.Type().AssignableTo(typ) {
		return v
	}
	if v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
		if v.Type().AssignableTo(typ) {
			return v
		}
	}
	switch {
	case v.Kind() == reflect.Pointer && v.Type().Elem().AssignableTo(typ):
		v = v.Elem()
		if !v.IsValid() {
			s.fail("dereference of nil pointer of type %s", typ)
		}
	case reflect.PointerTo(v.Type()).AssignableTo(typ) && v.CanAddr():
		v = v.Addr()
	default:
		s.fail("wrong type for value; expected %s; got %s", typ, v.Type())
	}
	return v
}

// evalArg evaluates the argument n for a parameter of type typ.
func (s *state) evalArg(dot reflect.Value, typ reflect.Type, n parse.Node) reflect.Value {
	s.at(n)
	switch a := n.(type) {
	case *parse.DotNode:
		return s.check(dot, typ)
	case *parse.NilNode:
		if nilable(typ) {
			return reflect.Zero(typ)
		}
		s.fail("cannot assign nil to %s", typ)
	case *parse.FieldNode:
		return s.check(s.evalFieldNode(dot, a, []parse.Node{n}, missing), typ)
	case *parse.VariableNode:
		return s.check(s.evalVariable(dot, a, nil, missing), typ)
	case *parse.PipeNode:
		return s.check(s.evalPipeline(dot, a), typ)
	case *parse.IdentifierNode:
		return s.check(s.evalFunction(dot, a, a, nil, missing), typ)
	case *parse.ChainNode:
		return s.check(s.evalChain(dot, a, nil, missing), typ)
	}
	num, _ := n.(*parse.NumberNode)
	switch typ.Kind() {
	case reflect.Bool:
		if b, ok := n.(*parse.BoolNode); ok {
			v := reflect.New(typ).Elem()
			v.SetBool(b.True)
			return v
		}
		s.fail("expected bool; found %s", n)
	case reflect.String:
		if str, ok := n.(*parse.StringNode); ok {
			v := reflect.New(typ).Elem()
			v.SetString(str.Text)
			return v
		}
		s.fail("expected string; found %s", n)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if num != nil && num.IsInt {
			v := reflect.New(typ).Elem()
			v.SetInt(num.Int64)
			return v
		}
		s.fail("expected integer; found %s", n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if num != nil && num.IsUint {
			v := reflect.New(typ).Elem()
			v.SetUint(num.Uint64)
			return v
		}
		s.fail("expected unsigned integer; found %s", n)
	case reflect.Float32, reflect.Float64:
		if num != nil && num.IsFloat {
			v := reflect.New(typ).Elem()
			v.SetFloat(num.Float64)
			return v
		}
		s.fail("expected float; found %s", n)
	case reflect.Complex64, reflect.Complex128:
		if num != nil && num.IsComplex {
			v := reflect.New(typ).Elem()
			v.SetComplex(num.Complex128)
			return v
		}
		s.fail("expected complex; found %s", n)
	case reflect.Interface:
		if typ.NumMethod() == 0 {
			return s.evalAny(dot, n)
		}
	case reflect.Struct:
		if typ == reflectValueType {
			return reflect.ValueOf(s.evalAny(dot, n))
		}
	}
	s.fail("can't handle %s for arg of type %s", n, typ)
	return invalid
}

// evalAny evaluates a literal for a parameter of type any.
func (s *state) evalAny(dot reflect.Value, n parse.Node) reflect.Value {
	s.at(n)
	switch a := n.(type) {
	case *parse.BoolNode:
		return reflect.ValueOf(a.True)
	case *parse.NumberNode:
		return s.number(a)
	case *parse.StringNode:
		return reflect.ValueOf(a.Text)
	}
	s.fail("can't handle assignment of %s to empty interface argument", n)
	return invalid
}

// deref follows pointers and interfaces to a value; isNil says that it
// stopped at a nil one (then v is that pointer or interface).
func deref(v reflect.Value) (_ reflect.Value, isNil bool) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return v, true
		}
		v = v.Elem()
	}
	return v, false
}

// concrete is the value inside an interface (invalid for a nil one).
func concrete(v reflect.Value) reflect.Value {
	if v.Kind() != reflect.Interface {
		return v
	}
	if v.IsNil() {
		return invalid
	}
	return v.Elem()
}

// print writes v as an action prints it.
func (s *state) print(n parse.Node, v reflect.Value) {
	s.at(n)
	p, ok := printable(v)
	if !ok {
		s.fail("can't print %s of type %s", n, v.Type())
	}
	if _, err := fmt.Fprint(s.w, p); err != nil {
		panic(writeFailure{err})
	}
}

// printable is what fmt should print for v: through pointers, "<no
// value>" for nothing; not ok for a function or channel that says nothing
// of itself.
func printable(v reflect.Value) (any, bool) {
	if v.Kind() == reflect.Pointer {
		v, _ = deref(v)
	}
	if !v.IsValid() {
		return "<no value>", true
	}
	if !v.Type().Implements(errorType) && !v.Type().Implements(stringerType) {
		pt := reflect.PointerTo(v.Type())
		if v.CanAddr() && (pt.Implements(errorType) || pt.Implements(stringerType)) {
			v = v.Addr()
		} else if k := v.Kind(); k == reflect.Chan || k == reflect.Func {
			return nil, false
		}
	}
	return v.Interface(), true
}
