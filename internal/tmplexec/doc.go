// Package tmplexec executes Go templates (the language of text/template)
// from the trees text/template/parse gives, without ever looking a method
// up by name.
//
// Why: text/template resolves {{ .Name }} by trying a method called Name
// first (reflect.Value.MethodByName with a name known only at run time).
// A binary that can reach such a call makes the Go linker keep every
// exported method of every type that may be converted to an interface:
// for the agent, all Kubernetes API types, apply configurations and typed
// clients: 27 MB of its 86 MB binary, most of it resident. The
// policy templates never need methods: their data are JSON values
// (map[string]any, []any, strings, numbers, booleans) and structs without
// methods, and their functions are registered ones.
//
// What it does: the whole template language (text, actions, pipelines,
// variables and assignments, if/else if/with/else with/range/break/
// continue, define/template/block, comments, parenthesised pipelines and
// chained fields), the builtins (and, or, not, len, index, slice, print,
// printf, println, eq, ne, lt, le, gt, ge, html, js, urlquery, call) and
// registered functions, with text/template's output and its error
// messages, located as it locates them ("template: tmpl:3:7: executing
// "tmpl" at <.a.b>: ..."). What it does not: call methods. A field that
// is not a struct field or a map key is an error in the words
// text/template uses for a name that is neither field nor method. Maps
// missing a key give "<no value>" (text/template's default missingkey).
//
// Registered functions and call are invoked with reflect.Value.Call,
// which, unlike Method and MethodByName, does not make the linker keep
// methods.
package tmplexec
