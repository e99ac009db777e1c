package tmplexec

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// builtins are the functions every template has, with the signatures
// text/template gives them (which decide how arguments are converted and
// how a wrong number of them is worded). and, or and call are evaluated
// by the executor itself; their functions here only carry signatures.
var builtins = map[string]reflect.Value{
	"and":      reflect.ValueOf(lazy),
	"or":       reflect.ValueOf(lazy),
	"call":     reflect.ValueOf(lazy),
	"not":      reflect.ValueOf(not),
	"len":      reflect.ValueOf(length),
	"index":    reflect.ValueOf(index),
	"slice":    reflect.ValueOf(slice),
	"print":    reflect.ValueOf(fmt.Sprint),
	"printf":   reflect.ValueOf(fmt.Sprintf),
	"println":  reflect.ValueOf(fmt.Sprintln),
	"html":     reflect.ValueOf(func(args ...any) string { return htmlEscape(argsString(args)) }),
	"js":       reflect.ValueOf(func(args ...any) string { return jsEscape(argsString(args)) }),
	"urlquery": reflect.ValueOf(func(args ...any) string { return url.QueryEscape(argsString(args)) }),
	"eq":       reflect.ValueOf(eq),
	"ne":       reflect.ValueOf(ne),
	"lt":       reflect.ValueOf(lt),
	"le":       reflect.ValueOf(le),
	"gt":       reflect.ValueOf(gt),
	"ge":       reflect.ValueOf(ge),
}

// builtinNames are the builtins' names, for the parser.
var builtinNames = func() map[string]any {
	m := map[string]any{}
	for name := range builtins {
		m[name] = true
	}
	return m
}()

func lazy(reflect.Value, ...reflect.Value) reflect.Value { panic("evaluated by the executor") }

// callFunc is call: fn called with args.
func callFunc(name string, fn reflect.Value, args ...reflect.Value) (reflect.Value, error) {
	fn = concrete(fn)
	if !fn.IsValid() {
		return invalid, errors.New("call of nil")
	}
	typ := fn.Type()
	if typ.Kind() != reflect.Func {
		return invalid, fmt.Errorf("non-function %s of type %s", name, typ)
	}
	if err := checkResults(name, typ); err != nil {
		return invalid, err
	}
	in := typ.NumIn()
	var rest reflect.Type
	if typ.IsVariadic() {
		if len(args) < in-1 {
			return invalid, fmt.Errorf("wrong number of args for %s: got %d want at least %d", name, len(args), in-1)
		}
		rest = typ.In(in - 1).Elem()
	} else if len(args) != in {
		return invalid, fmt.Errorf("wrong number of args for %s: got %d want %d", name, len(args), in)
	}
	argv := make([]reflect.Value, len(args))
	for i, a := range args {
		pt := rest
		if !typ.IsVariadic() || i < in-1 {
			pt = typ.In(i)
		}
		v, err := convertArg(concrete(a), pt)
		if err != nil {
			return invalid, fmt.Errorf("arg %d: %w", i, err)
		}
		argv[i] = v
	}
	return invoke(fn, argv)
}

// convertArg makes v a value of typ for call and index: integers convert
// between integer types.
func convertArg(v reflect.Value, typ reflect.Type) (reflect.Value, error) {
	if !v.IsValid() {
		if !nilable(typ) {
			return invalid, fmt.Errorf("value is nil; should be of type %s", typ)
		}
		v = reflect.Zero(typ)
	}
	if v.Type().AssignableTo(typ) {
		return v, nil
	}
	if isInteger(v.Kind()) && isInteger(typ.Kind()) && v.Type().ConvertibleTo(typ) {
		return v.Convert(typ), nil
	}
	return invalid, fmt.Errorf("value has type %s; should be %s", v.Type(), typ)
}

func isInteger(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

func truthOf(v reflect.Value) bool {
	t, _ := isTrue(concrete(v))
	return t
}

func not(v reflect.Value) bool { return !truthOf(v) }

func length(v reflect.Value) (int, error) {
	v, isNil := deref(v)
	if isNil {
		return 0, errors.New("len of nil pointer")
	}
	switch v.Kind() {
	case reflect.Array, reflect.Chan, reflect.Map, reflect.Slice, reflect.String:
		return v.Len(), nil
	}
	return 0, fmt.Errorf("len of type %s", v.Type())
}

// position is v as an index into something of capacity max.
func position(v reflect.Value, max int) (int, error) {
	var x int64
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x = v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		x = int64(v.Uint())
	case reflect.Invalid:
		return 0, errors.New("cannot index slice/array with nil")
	default:
		return 0, fmt.Errorf("cannot index slice/array with type %s", v.Type())
	}
	if x < 0 || int(x) < 0 || int(x) > max {
		return 0, fmt.Errorf("index out of range: %d", x)
	}
	return int(x), nil
}

func index(item reflect.Value, keys ...reflect.Value) (reflect.Value, error) {
	item = concrete(item)
	if !item.IsValid() {
		return invalid, errors.New("index of untyped nil")
	}
	for _, k := range keys {
		k = concrete(k)
		var isNil bool
		if item, isNil = deref(item); isNil {
			return invalid, errors.New("index of nil pointer")
		}
		switch item.Kind() {
		case reflect.Array, reflect.Slice, reflect.String:
			i, err := position(k, item.Len())
			if err != nil {
				return invalid, err
			}
			item = item.Index(i)
		case reflect.Map:
			key, err := convertArg(k, item.Type().Key())
			if err != nil {
				return invalid, err
			}
			if v := item.MapIndex(key); v.IsValid() {
				item = v
			} else {
				item = reflect.Zero(item.Type().Elem())
			}
		default:
			return invalid, fmt.Errorf("can't index item of type %s", item.Type())
		}
	}
	return item, nil
}

func slice(item reflect.Value, bounds ...reflect.Value) (reflect.Value, error) {
	item = concrete(item)
	if !item.IsValid() {
		return invalid, errors.New("slice of untyped nil")
	}
	item, isNil := deref(item)
	if isNil {
		return invalid, errors.New("slice of nil pointer")
	}
	if len(bounds) > 3 {
		return invalid, fmt.Errorf("too many slice indexes: %d", len(bounds))
	}
	var max int
	switch item.Kind() {
	case reflect.String:
		if len(bounds) == 3 {
			return invalid, errors.New("cannot 3-index slice a string")
		}
		max = item.Len()
	case reflect.Array, reflect.Slice:
		max = item.Cap()
	default:
		return invalid, fmt.Errorf("can't slice item of type %s", item.Type())
	}
	b := [3]int{0, item.Len()}
	for i, v := range bounds {
		x, err := position(v, max)
		if err != nil {
			return invalid, err
		}
		b[i] = x
	}
	if b[0] > b[1] {
		return invalid, fmt.Errorf("invalid slice index: %d > %d", b[0], b[1])
	}
	if len(bounds) < 3 {
		return item.Slice(b[0], b[1]), nil
	}
	if b[1] > b[2] {
		return invalid, fmt.Errorf("invalid slice index: %d > %d", b[1], b[2])
	}
	return item.Slice3(b[0], b[1], b[2]), nil
}

// Comparisons, as text/template compares: basic kinds only for order,
// integers of either sign with each other, nil with nillable values.

type basic int

const (
	noBasic basic = iota
	boolBasic
	complexBasic
	intBasic
	floatBasic
	stringBasic
	uintBasic
)

var (
	errBadComparisonType = errors.New("invalid type for comparison")
	errNoComparison      = errors.New("missing argument for comparison")
)

func basicOf(v reflect.Value) (basic, error) {
	switch v.Kind() {
	case reflect.Bool:
		return boolBasic, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intBasic, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintBasic, nil
	case reflect.Float32, reflect.Float64:
		return floatBasic, nil
	case reflect.Complex64, reflect.Complex128:
		return complexBasic, nil
	case reflect.String:
		return stringBasic, nil
	}
	return noBasic, errBadComparisonType
}

func nilValue(v reflect.Value) bool {
	if !v.IsValid() {
		return true
	}
	switch v.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice:
		return v.IsNil()
	}
	return false
}

func eq(a reflect.Value, others ...reflect.Value) (bool, error) {
	a = concrete(a)
	if len(others) == 0 {
		return false, errNoComparison
	}
	ka, _ := basicOf(a)
	for _, b := range others {
		b = concrete(b)
		kb, _ := basicOf(b)
		equal := false
		switch {
		case ka == intBasic && kb == uintBasic:
			equal = a.Int() >= 0 && uint64(a.Int()) == b.Uint()
		case ka == uintBasic && kb == intBasic:
			equal = b.Int() >= 0 && a.Uint() == uint64(b.Int())
		case ka != kb:
			if a.IsValid() && b.IsValid() {
				return false, fmt.Errorf("incompatible types for comparison: %v and %v", a.Type(), b.Type())
			}
		case ka == boolBasic:
			equal = a.Bool() == b.Bool()
		case ka == complexBasic:
			equal = a.Complex() == b.Complex()
		case ka == floatBasic:
			equal = a.Float() == b.Float()
		case ka == intBasic:
			equal = a.Int() == b.Int()
		case ka == stringBasic:
			equal = a.String() == b.String()
		case ka == uintBasic:
			equal = a.Uint() == b.Uint()
		default:
			if a.Kind() != b.Kind() && a.Kind() != reflect.Invalid && b.Kind() != reflect.Invalid {
				return false, fmt.Errorf("non-comparable types %s: %v, %s: %v", a, a.Type(), b.Type(), b)
			}
			if nilValue(a) || nilValue(b) {
				equal = nilValue(a) == nilValue(b)
			} else {
				if !b.Type().Comparable() {
					return false, fmt.Errorf("non-comparable type %s: %v", b, b.Type())
				}
				equal = a.Interface() == b.Interface()
			}
		}
		if equal {
			return true, nil
		}
	}
	return false, nil
}

func ne(a, b reflect.Value) (bool, error) {
	equal, err := eq(a, b)
	return !equal, err
}

func lt(a, b reflect.Value) (bool, error) {
	a = concrete(a)
	ka, err := basicOf(a)
	if err != nil {
		return false, err
	}
	b = concrete(b)
	kb, err := basicOf(b)
	if err != nil {
		return false, err
	}
	switch {
	case ka == intBasic && kb == uintBasic:
		return a.Int() < 0 || uint64(a.Int()) < b.Uint(), nil
	case ka == uintBasic && kb == intBasic:
		return b.Int() >= 0 && a.Uint() < uint64(b.Int()), nil
	case ka != kb:
		return false, fmt.Errorf("incompatible types for comparison: %v and %v", a.Type(), b.Type())
	case ka == boolBasic, ka == complexBasic:
		return false, errBadComparisonType
	case ka == floatBasic:
		return a.Float() < b.Float(), nil
	case ka == intBasic:
		return a.Int() < b.Int(), nil
	case ka == stringBasic:
		return a.String() < b.String(), nil
	}
	return a.Uint() < b.Uint(), nil
}

func le(a, b reflect.Value) (bool, error) {
	less, err := lt(a, b)
	if less || err != nil {
		return less, err
	}
	return eq(a, b)
}

func gt(a, b reflect.Value) (bool, error) {
	lessOrEqual, err := le(a, b)
	if err != nil {
		return false, err
	}
	return !lessOrEqual, nil
}

func ge(a, b reflect.Value) (bool, error) {
	less, err := lt(a, b)
	if err != nil {
		return false, err
	}
	return !less, nil
}

// argsString is fmt.Sprint of args, through pointers as actions print.
func argsString(args []any) string {
	if len(args) == 1 {
		if s, ok := args[0].(string); ok {
			return s
		}
	}
	for i, a := range args {
		if p, ok := printable(reflect.ValueOf(a)); ok {
			args[i] = p
		}
	}
	return fmt.Sprint(args...)
}

var htmlReplacer = strings.NewReplacer("\000", "\uFFFD", `"`, "&#34;", "'", "&#39;", "&", "&amp;", "<", "&lt;", ">", "&gt;")

func htmlEscape(s string) string { return htmlReplacer.Replace(s) }

// jsEscape escapes s for a JavaScript string: quotes, backslash, < > & =
// and control characters as escapes, unprintable runes as \uXXXX.
func jsEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\\':
				b.WriteString(`\\`)
			case c == '\'':
				b.WriteString(`\'`)
			case c == '"':
				b.WriteString(`\"`)
			case c == '<':
				b.WriteString(`\u003C`)
			case c == '>':
				b.WriteString(`\u003E`)
			case c == '&':
				b.WriteString(`\u0026`)
			case c == '=':
				b.WriteString(`\u003D`)
			case c < ' ':
				fmt.Fprintf(&b, `\u00%02X`, c)
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsPrint(r) {
			b.WriteString(s[i : i+size])
		} else {
			fmt.Fprintf(&b, `\u%04X`, r)
		}
		i += size
	}
	return b.String()
}

// sortedKeys are the keys of map m in the order range visits them: by
// value for basic kinds, else by their printed form.
func sortedKeys(m reflect.Value) []reflect.Value {
	keys := m.MapKeys()
	slices.SortStableFunc(keys, compareKeys)
	return keys
}

func compareKeys(a, b reflect.Value) int {
	ka, _ := basicOf(a)
	kb, _ := basicOf(b)
	if ka == kb {
		switch ka {
		case stringBasic:
			return cmp.Compare(a.String(), b.String())
		case intBasic:
			return cmp.Compare(a.Int(), b.Int())
		case uintBasic:
			return cmp.Compare(a.Uint(), b.Uint())
		case floatBasic:
			return cmp.Compare(a.Float(), b.Float())
		case boolBasic:
			return cmp.Compare(boolRank(a.Bool()), boolRank(b.Bool()))
		}
	}
	return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
