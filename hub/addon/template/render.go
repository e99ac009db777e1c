package template

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// HubKubeconfigPath is where a kubeClient registration's Secret is mounted
// in the add-on's containers: the value of HUB_KUBECONFIG.
const HubKubeconfigPath = "/managed/hub-kubeconfig/kubeconfig"

// renderInput is what one cluster's manifests of a template add-on are
// rendered from.
type renderInput struct {
	addOn    string
	cluster  string
	template *addonv1alpha1.AddOnTemplate
	// config is the AddOnDeploymentConfig in effect, nil when none.
	config *addonv1alpha1.AddOnDeploymentConfigSpec
	// clusterRegistries are the mirrors of the cluster's
	// image-registries annotation, below the config's.
	clusterRegistries []addonv1alpha1.ImageMirror
	// namespace is the agent's install namespace (status.namespace).
	namespace string
}

// object is one rendered manifest.
type object struct {
	obj  *unstructured.Unstructured
	hook bool
}

// renderAll renders the template and says the agent's install namespace:
// the namespace of the first Deployment, else of the first DaemonSet, of
// the rendered manifests (so an AddOnDeploymentConfig's
// agentInstallNamespace wins), else in.namespace.
func renderAll(in renderInput) ([]object, string, error) {
	objs, err := render(in)
	if err != nil {
		return nil, in.namespace, err
	}
	ns := in.namespace
	found := false
	for _, kind := range []string{"Deployment", "DaemonSet"} {
		for _, o := range objs {
			if !found && !o.hook && o.obj.GetKind() == kind && o.obj.GroupVersionKind().Group == "apps" && o.obj.GetNamespace() != "" {
				ns, found = o.obj.GetNamespace(), true
			}
		}
	}
	if in.config != nil && len(in.config.ProxyConfig.CABundle) > 0 {
		in.namespace = ns
		cm := proxyCAConfigMap(in)
		if err := decorate(in, variables(in), cm); err != nil {
			return nil, ns, err
		}
		objs = append(objs, object{obj: cm})
	}
	return objs, ns, nil
}

// render substitutes the variables into every manifest of the template,
// decodes it and decorates it as the config asks. Any manifest that does
// not render fails the whole rendering: nothing is half-applied.
func render(in renderInput) ([]object, error) {
	values := variables(in)
	var objs []object
	for i, m := range in.template.Spec.AgentSpec.Workload.Manifests {
		raw, err := substitute(string(m.Raw), values)
		if err != nil {
			return nil, fmt.Errorf("manifest %d of AddOnTemplate %s: %w", i, in.template.Name, err)
		}
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(raw), &u.Object); err != nil {
			return nil, fmt.Errorf("manifest %d of AddOnTemplate %s is not a JSON object once its variables are substituted: %w", i, in.template.Name, err)
		}
		if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("manifest %d of AddOnTemplate %s needs apiVersion, kind and metadata.name", i, in.template.Name)
		}
		objs = append(objs, object{obj: u, hook: isHook(u)})
	}
	for _, o := range objs {
		if err := decorate(in, values, o.obj); err != nil {
			return nil, fmt.Errorf("%s %s of AddOnTemplate %s: %w", o.obj.GetKind(), o.obj.GetName(), in.template.Name, err)
		}
	}
	return objs, nil
}

// variables are the values substituted into the manifests, lowest to
// highest: HUB_KUBECONFIG < the config's customized variables <
// CLUSTER_NAME and INSTALL_NAMESPACE.
func variables(in renderInput) map[string]string {
	v := map[string]string{}
	if len(in.template.Spec.Registration) > 0 {
		v["HUB_KUBECONFIG"] = HubKubeconfigPath
	}
	if in.config != nil {
		for _, cv := range in.config.CustomizedVariables {
			v[cv.Name] = cv.Value
		}
	}
	v["CLUSTER_NAME"] = in.cluster
	if ns := installNamespaceOverride(in.config); ns != "" {
		v["INSTALL_NAMESPACE"] = ns
	}
	return v
}

// builtinEnv are the variables every container of a workload gets as env
// vars, in this order, those set.
var builtinEnv = []string{"HUB_KUBECONFIG", "CLUSTER_NAME", "INSTALL_NAMESPACE"}

// installNamespaceOverride is the namespace the config moves the agent to,
// "" to keep the template's.
func installNamespaceOverride(config *addonv1alpha1.AddOnDeploymentConfigSpec) string {
	if config == nil {
		return ""
	}
	return config.AgentInstallNamespace
}

// substitute replaces each {{NAME}} in s by NAME's value, exactly as written
// between the braces; unknown names become "".
func substitute(s string, values map[string]string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.Index(s[i+2:], "}}")
		if j < 0 {
			return "", fmt.Errorf("a variable opened with {{ at %q is never closed with }}", abbreviate(s[i:]))
		}
		b.WriteString(s[:i])
		b.WriteString(values[s[i+2:i+2+j]])
		s = s[i+2+j+2:]
	}
}

func abbreviate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// isHook says whether a manifest is a pre-delete hook: a Job or Pod
// labelled or annotated with the pre-delete label.
func isHook(u *unstructured.Unstructured) bool {
	gk := u.GroupVersionKind().GroupKind()
	if !(gk.Group == "batch" && gk.Kind == "Job") && !(gk.Group == "" && gk.Kind == "Pod") {
		return false
	}
	_, l := u.GetLabels()[addon.PreDeleteHookLabel]
	_, a := u.GetAnnotations()[addon.PreDeleteHookLabel]
	return l || a
}

// workload says whether u is a Deployment or DaemonSet, and its resource.
func workload(u *unstructured.Unstructured) (string, bool) {
	gk := u.GroupVersionKind().GroupKind()
	if gk.Group != "apps" {
		return "", false
	}
	switch gk.Kind {
	case "Deployment":
		return "deployments", true
	case "DaemonSet":
		return "daemonsets", true
	}
	return "", false
}

// proxyCAConfigMap carries the config's proxy CA bundle to the cluster.
func proxyCAConfigMap(in renderInput) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": in.addOn + "-proxy-ca", "namespace": in.namespace},
		"data":     map[string]any{"ca-bundle.crt": string(in.config.ProxyConfig.CABundle)},
	}}
}

// manifestsOf encodes objects as manifests.
func manifestsOf(objs []object) ([]workv1.Manifest, error) {
	out := make([]workv1.Manifest, 0, len(objs))
	for _, o := range objs {
		raw, err := json.Marshal(o.obj.Object)
		if err != nil {
			return nil, err
		}
		out = append(out, workv1.Manifest{})
		out[len(out)-1].Raw = raw
	}
	return out, nil
}
