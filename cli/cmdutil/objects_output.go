package cmdutil

import (
	"fmt"
	"io"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// PrintObjects writes objs as --dry-run prints them: a YAML stream that
// kubectl apply -f and kustomize take, or a JSON v1 List.
func PrintObjects(w io.Writer, format string, objs []client.Object) error {
	if format == OutputJSON {
		items := make([]any, len(objs))
		for i, o := range objs {
			items[i] = o
		}
		return PrintData(w, OutputJSON, map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	}
	for _, o := range objs {
		data, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "---\n%s", data); err != nil {
			return err
		}
	}
	return nil
}
