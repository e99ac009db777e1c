package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
)

// hubTemplatesHelp is the part of `policy test --help` about hub templates.
const hubTemplatesHelp = `
Hub templates ({{hub ... hub}}) are resolved by the hub before a policy
reaches a cluster. --hub-objects names what the hub holds: a directory or
file of YAML/JSON objects (the ConfigMaps and Secrets in the policy's
namespace that fromConfigMap, fromSecret, copyConfigMapData,
copySecretData and lookup read, and the ManagedCluster of the cluster).
The templates are then resolved as the hub would resolve them for the
cluster --clusters names (by default the one ManagedCluster of the hub
objects; its labels are .ManagedClusterLabels), with the hub's
restrictions: only the policy's namespace, and of the cluster-scoped
objects only that ManagedCluster. A template that does not resolve is
reported as the cluster would report it (a template-error). Without
--hub-objects a policy with hub templates is refused, naming them.`

// hubTemplatesExample is the example of --hub-objects.
const hubTemplatesExample = `

  # Resolve the policy's hub templates against hub objects first, for cluster1.
  flotilla policy test policy-site.yaml --hub-objects ./hub --clusters cluster1 --against ./cluster1`

// hubOptions are the flags of hub template resolution.
type hubOptions struct {
	objects  string
	clusters []string
}

func (h *hubOptions) addFlags(g *cmdutil.Globals, cmd *cobra.Command) {
	cmd.Flags().StringVar(&h.objects, "hub-objects", "", "resolve hub templates ({{hub ... hub}}) against this directory or file of the hub's objects")
	cmdutil.AddClustersFlag(g, cmd, &h.clusters, "with --hub-objects: the managed cluster the policy is copied for, one name (default: the one ManagedCluster of the hub objects)")
}

var managedClusterGVK = schema.GroupVersionKind{Group: "cluster.open-cluster-management.io", Version: "v1", Kind: "ManagedCluster"}

// resolve resolves the hub templates of policies, in place, as the hub
// does for one cluster: a template that does not resolve keeps its text
// and the hub-templates-error annotation. Without --hub-objects, a policy
// with hub templates is an error that names them.
func (h *hubOptions) resolve(ctx context.Context, path string, policies []*policyv1.Policy) error {
	var withTemplates []string
	for _, p := range policies {
		for i, t := range p.Spec.PolicyTemplates {
			if policytemplate.HasHubTemplates(t.ObjectDefinition.Raw) {
				withTemplates = append(withTemplates, fmt.Sprintf("Policy %s, policy template at index %d", policyName(p), i))
			}
		}
	}
	if len(withTemplates) == 0 {
		return nil
	}
	if h.objects == "" {
		return fmt.Errorf("%s: hub templates ({{hub ... hub}}) in %s: the hub resolves them before a policy reaches a cluster; "+
			"pass --hub-objects DIR (the hub's ConfigMaps, Secrets and the cluster's ManagedCluster) and --clusters NAME to resolve them as the hub would",
			path, strings.Join(withTemplates, "; "))
	}
	set, err := engine.LoadObjects(h.objects)
	if err != nil {
		return fmt.Errorf("--hub-objects: %w", err)
	}
	cluster, labels, err := h.managedCluster(set)
	if err != nil {
		return err
	}
	reader := engine.ReaderFor(ctx, set)
	secrets := &policytemplate.Secrets{}
	for _, o := range set.Objects() {
		if o.GroupVersionKind().GroupKind() == (schema.GroupKind{Kind: "Secret"}) {
			data, _, _ := unstructured.NestedStringMap(o.Object, "data")
			for _, v := range data {
				secrets.AddEncoded(v)
			}
		}
	}
	for _, p := range policies {
		if err := resolvePolicy(p, reader, secrets, cluster, labels); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

// managedCluster is the cluster --clusters names, or the one ManagedCluster
// of the hub objects, and its labels.
func (h *hubOptions) managedCluster(set *engine.ObjectSet) (string, map[string]string, error) {
	var names []string
	labels := map[string]map[string]string{}
	for _, o := range set.Objects() {
		if o.GroupVersionKind().GroupKind() == managedClusterGVK.GroupKind() {
			names = append(names, o.GetName())
			labels[o.GetName()] = o.GetLabels()
		}
	}
	sort.Strings(names)
	switch {
	case len(h.clusters) > 1:
		return "", nil, fmt.Errorf("--clusters %s: a policy test resolves hub templates for one cluster; run it once per cluster", strings.Join(h.clusters, ","))
	case len(h.clusters) == 1:
		return h.clusters[0], maps.Clone(labels[h.clusters[0]]), nil
	case len(names) == 1:
		return names[0], maps.Clone(labels[names[0]]), nil
	case len(names) == 0:
		return "", nil, fmt.Errorf("--hub-objects %s holds no ManagedCluster: name the cluster the policy is copied for with --clusters NAME", h.objects)
	}
	return "", nil, fmt.Errorf("--hub-objects %s holds %d ManagedClusters (%s): name the one the policy is copied for with --clusters NAME",
		h.objects, len(names), strings.Join(names, ", "))
}

// resolvePolicy resolves the hub templates of p for cluster, as the
// propagator does; an error's values read from secrets are redacted, as
// the hub redacts them.
func resolvePolicy(p *policyv1.Policy, reader policytemplate.ObjectReader, secrets *policytemplate.Secrets, cluster string, labels map[string]string) error {
	if p.Namespace == "" {
		return fmt.Errorf("Policy %s has hub templates but no metadata.namespace: hub templates read only the namespace of the policy; set it", p.Name)
	}
	data := policytemplate.HubData{
		ManagedClusterName: cluster, ManagedClusterLabels: labels,
		PolicyMetadata: map[string]any{"name": p.Name, "namespace": p.Namespace, "labels": maps.Clone(p.Labels), "annotations": maps.Clone(p.Annotations)},
	}
	res := &policytemplate.HubResolver{Namespace: p.Namespace, Reader: reader}
	for i := range p.Spec.PolicyTemplates {
		t := &p.Spec.PolicyTemplates[i]
		out, _, _, err := res.Resolve(t.ObjectDefinition.Raw, data)
		if err == nil {
			t.ObjectDefinition.Raw = out
			continue
		}
		u := &unstructured.Unstructured{}
		if jerr := json.Unmarshal(t.ObjectDefinition.Raw, &u.Object); jerr != nil {
			return fmt.Errorf("Policy %s, policy template at index %d: %w", policyName(p), i, jerr)
		}
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[policytemplate.HubTemplatesErrorAnnotation] = policytemplate.Cap(secrets.Redact(err.Error()), policytemplate.DetailLimit, "")
		u.SetAnnotations(a)
		raw, merr := json.Marshal(u.Object)
		if merr != nil {
			return merr
		}
		t.ObjectDefinition.Raw = raw
	}
	return nil
}
