package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// patchOp is one checked JSON patch operation, ready to apply. Operations
// apply one at a time so that a failure names its own index.
type patchOp struct {
	op    workv1alpha1.JSONPatchOperation
	patch jsonpatch.Patch
}

// compilePatch checks the operations and turns them into patches; errors
// name the operation's index.
func compilePatch(ops []workv1alpha1.JSONPatchOperation) ([]patchOp, error) {
	out := make([]patchOp, len(ops))
	for i, op := range ops {
		p, err := compileOp(op)
		if err != nil {
			return nil, fmt.Errorf("jsonPatch[%d]: %w", i, err)
		}
		out[i] = patchOp{op: op, patch: p}
	}
	return out, nil
}

// compileOp checks one operation's fields and decodes it.
func compileOp(op workv1alpha1.JSONPatchOperation) (jsonpatch.Patch, error) {
	doc := map[string]any{"op": op.Op, "path": op.Path}
	if err := checkPointer("path", op.Path); err != nil {
		return nil, err
	}
	switch op.Op {
	case "add", "replace", "test":
		if op.Value == nil || len(op.Value.Raw) == 0 {
			return nil, fmt.Errorf("%s %s has no value — set value (any JSON but null)", op.Op, op.Path)
		}
		if !json.Valid(op.Value.Raw) {
			return nil, fmt.Errorf("%s %s: value is not valid JSON", op.Op, op.Path)
		}
		doc["value"] = json.RawMessage(op.Value.Raw)
	case "move", "copy":
		if op.From == "" {
			return nil, fmt.Errorf("%s %s has no from — set from to the source path", op.Op, op.Path)
		}
		if err := checkPointer("from", op.From); err != nil {
			return nil, err
		}
		doc["from"] = op.From
	case "remove":
	default:
		return nil, fmt.Errorf("op %q is not add, remove, replace, move, copy or test", op.Op)
	}
	b, err := json.Marshal([]any{doc})
	if err != nil {
		return nil, err
	}
	return jsonpatch.DecodePatch(b)
}

// checkPointer rejects a JSON pointer that does not start with a slash.
func checkPointer(field, p string) error {
	if p != "" && !strings.HasPrefix(p, "/") {
		return fmt.Errorf("%s %q is not a JSON pointer — start it with /, e.g. /spec/replicas", field, p)
	}
	return nil
}

// applyPatch applies the operations in order to a manifest's JSON.
func applyPatch(doc []byte, ops []patchOp) ([]byte, error) {
	for i, p := range ops {
		out, err := p.patch.Apply(doc)
		if err != nil {
			return nil, fmt.Errorf("jsonPatch[%d]: %s", i, explainPatchError(p.op, err))
		}
		doc = out
	}
	return doc, nil
}

// explainPatchError says why an operation did not apply and what to change.
func explainPatchError(op workv1alpha1.JSONPatchOperation, err error) string {
	path := op.Path
	switch {
	case errors.Is(err, jsonpatch.ErrTestFailed):
		return fmt.Sprintf("path %s: test failed — the manifest's value there is not %s", path, op.Value.Raw)
	case errors.Is(err, jsonpatch.ErrInvalidIndex):
		return fmt.Sprintf("path %s: no such list index — use an existing index (or - to append with add)", path)
	case errors.Is(err, jsonpatch.ErrMissing):
		switch op.Op {
		case "add":
			return fmt.Sprintf("path %s: missing parent — add creates only the last step of the path; add its parent first", path)
		case "move", "copy":
			return fmt.Sprintf("from %s, path %s: missing key — from must exist, and so must the parent of path", op.From, path)
		default:
			return fmt.Sprintf("path %s: missing key — the path must exist for %s", path, op.Op)
		}
	}
	return fmt.Sprintf("%s %s: %v", op.Op, path, err)
}
