package policytemplate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// maxQuotedTemplate is how much of a failing template its error quotes.
const maxQuotedTemplate = 300

// HubData are what a hub template sees as ".".
type HubData struct {
	// ManagedClusterName is the cluster the policy is copied for.
	ManagedClusterName string
	// ManagedClusterLabels are that cluster's labels.
	ManagedClusterLabels map[string]string
	// PolicyMetadata are the name, namespace, labels and annotations of the root policy.
	PolicyMetadata map[string]any
}

// HubResolver resolves the hub templates ({{hub ... hub}}) of one root
// policy for one cluster, as OCM's propagator does: the helper functions
// and the reading ones, restricted to the root's namespace and, of the
// cluster-scoped objects, to the cluster's ManagedCluster.
type HubResolver struct {
	// Namespace is the root policy's: the only one templates may read.
	Namespace string
	// Reader reads the objects.
	Reader ObjectReader
}

// managedClusterGK is the kind of the one cluster-scoped object hub
// templates may read: the ManagedCluster they are resolved for.
var managedClusterGK = schema.GroupKind{Group: "cluster.open-cluster-management.io", Kind: "ManagedCluster"}

// HasHubTemplates reports whether raw holds hub templates.
func HasHubTemplates(raw []byte) bool { return bytes.Contains(raw, []byte(HubDelims.Left)) }

// Resolve resolves the hub templates of the object definition raw (JSON)
// with data, and returns the result as JSON, the objects it read, and
// whether it read a Secret. Without hub templates raw is returned as it is.
func (r *HubResolver) Resolve(raw []byte, data HubData) (out []byte, refs []Ref, sensitive bool, err error) {
	if !HasHubTemplates(raw) {
		return raw, nil, false, nil
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("failed to resolve the template %s: %w", quote(raw), err)
		}
	}()
	y, err := JSONToYAML(raw)
	if err != nil {
		return nil, nil, false, fmt.Errorf("convert the object definition to YAML: %w", err)
	}
	f := &ReadFuncs{Reader: r.Reader, Namespace: r.Namespace, Allowed: func(gvk schema.GroupVersionKind, name string) bool {
		return gvk.GroupKind() == managedClusterGK && name == data.ManagedClusterName
	}}
	tpl, err := template.New("tmpl").Delims(HubDelims.Left, HubDelims.Right).Funcs(f.Add(HelperFuncs())).
		Option("missingkey=zero").Parse(HubDelims.Prepare(string(y)))
	if err != nil {
		return nil, nil, false, err
	}
	var b strings.Builder
	if err := tpl.Execute(&b, data); err != nil {
		return nil, f.Refs, f.Sensitive, err
	}
	j, err := YAMLToJSON([]byte(b.String()))
	if err != nil {
		return nil, f.Refs, f.Sensitive, fmt.Errorf("the resolved template is not valid YAML: %w", err)
	}
	return j, f.Refs, f.Sensitive, nil
}

// quote is raw compacted, and cut short when long.
func quote(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		b.Reset()
		b.Write(raw)
	}
	s := b.String()
	if len(s) > maxQuotedTemplate {
		s = s[:maxQuotedTemplate] + "..."
	}
	return s
}
