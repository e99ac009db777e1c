package template

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// decorate applies the config to one rendered object: the install
// namespace to every object, and to Deployments and DaemonSets the
// built-in env vars, registration volumes, node placement, image mirrors,
// proxy and resources.
func decorate(in renderInput, values map[string]string, u *unstructured.Unstructured) error {
	if ns := installNamespaceOverride(in.config); ns != "" {
		rewriteNamespace(u, ns)
	}
	resource, ok := workload(u)
	if !ok {
		return nil
	}
	raw, found, err := unstructured.NestedMap(u.Object, "spec", "template", "spec")
	if err != nil || !found {
		return fmt.Errorf("has no pod template (spec.template.spec): %v", err)
	}
	pod := &corev1.PodSpec{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, pod); err != nil {
		return fmt.Errorf("pod template: %w", err)
	}
	decoratePod(in, values, resource, u.GetName(), pod)
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		return fmt.Errorf("pod template: %w", err)
	}
	return unstructured.SetNestedMap(u.Object, out, "spec", "template", "spec")
}

func decoratePod(in renderInput, values map[string]string, resource, name string, pod *corev1.PodSpec) {
	var env []corev1.EnvVar
	for _, k := range builtinEnv {
		if v, ok := values[k]; ok {
			env = append(env, corev1.EnvVar{Name: k, Value: v})
		}
	}
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	for _, reg := range in.template.Spec.Registration {
		switch {
		case reg.Type == "KubeClient":
			volumes = append(volumes, secretVolume("hub-kubeconfig", addon.KubeconfigSecretName(in.addOn)))
			mounts = append(mounts, corev1.VolumeMount{Name: "hub-kubeconfig", MountPath: "/managed/hub-kubeconfig"})
		case reg.Type == "CustomSigner" && reg.CustomSigner != nil:
			signer := reg.CustomSigner.SignerName
			vol := "cert-" + strings.NewReplacer("/", "-", ".", "-").Replace(signer)
			volumes = append(volumes, secretVolume(vol, addon.CustomSignerSecretName(in.addOn, signer)))
			mounts = append(mounts, corev1.VolumeMount{Name: vol, MountPath: "/managed/" + strings.ReplaceAll(signer, "/", "-")})
		}
	}
	cfg := in.config
	if cfg != nil {
		p := cfg.ProxyConfig
		for _, kv := range [][2]string{{"HTTP_PROXY", p.HTTPProxy}, {"HTTPS_PROXY", p.HTTPSProxy}, {"NO_PROXY", p.NoProxy}} {
			if kv[1] != "" {
				env = append(env, corev1.EnvVar{Name: kv[0], Value: kv[1]}, corev1.EnvVar{Name: strings.ToLower(kv[0]), Value: kv[1]})
			}
		}
		if len(p.CABundle) > 0 {
			env = append(env, corev1.EnvVar{Name: "CA_BUNDLE_FILE_PATH", Value: "/managed/proxy-ca/ca-bundle.crt"})
			volumes = append(volumes, corev1.Volume{Name: "proxy-ca", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: in.addOn + "-proxy-ca"}},
			}})
			mounts = append(mounts, corev1.VolumeMount{Name: "proxy-ca", MountPath: "/managed/proxy-ca"})
		}
		// OCM's quirk, kept: tolerations change only with a node selector.
		if np := cfg.NodePlacement; np != nil && len(np.NodeSelector) > 0 {
			pod.NodeSelector = np.NodeSelector
			pod.Tolerations = np.Tolerations
		}
	}
	pod.Volumes = append(pod.Volumes, volumes...)
	for i := range pod.Containers {
		c := &pod.Containers[i]
		c.Env = append(c.Env, env...)
		c.VolumeMounts = append(c.VolumeMounts, mounts...)
		c.Image = mirrorImage(c.Image, configRegistries(cfg), in.clusterRegistries)
		if cfg != nil {
			if r, ok := resourcesFor(cfg.ResourceRequirements, resource, name, c.Name); ok {
				c.Resources = r
			}
		}
	}
	for i := range pod.InitContainers {
		c := &pod.InitContainers[i]
		c.Image = mirrorImage(c.Image, configRegistries(cfg), in.clusterRegistries)
	}
}

func configRegistries(cfg *addonv1alpha1.AddOnDeploymentConfigSpec) []addonv1alpha1.ImageMirror {
	if cfg == nil {
		return nil
	}
	return cfg.Registries
}

func secretVolume(name, secret string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}
}

// rewriteNamespace moves u into ns: the namespace of a namespaced object,
// the name of a Namespace, and the subjects' namespaces of a binding.
func rewriteNamespace(u *unstructured.Unstructured, ns string) {
	gk := u.GroupVersionKind().GroupKind()
	switch {
	case gk.Group == "" && gk.Kind == "Namespace":
		u.SetName(ns)
		return
	case gk.Group == "rbac.authorization.k8s.io" && (gk.Kind == "RoleBinding" || gk.Kind == "ClusterRoleBinding"):
		subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
		for _, s := range subjects {
			if m, ok := s.(map[string]any); ok && m["namespace"] != nil && m["namespace"] != "" {
				m["namespace"] = ns
			}
		}
		if subjects != nil {
			_ = unstructured.SetNestedSlice(u.Object, subjects, "subjects")
		}
	}
	if u.GetNamespace() != "" {
		u.SetNamespace(ns)
	}
}

// mirrorImage is image from the first matching mirror of the config, else
// of the cluster's annotation. A mirror with no source takes every image,
// keeping only its last path element (name:tag).
func mirrorImage(image string, config, cluster []addonv1alpha1.ImageMirror) string {
	for _, list := range [][]addonv1alpha1.ImageMirror{config, cluster} {
		for _, m := range list {
			switch {
			case m.Source == "":
				return strings.TrimSuffix(m.Mirror, "/") + "/" + image[strings.LastIndex(image, "/")+1:]
			case strings.HasPrefix(image, m.Source):
				return m.Mirror + strings.TrimPrefix(image, m.Source)
			}
		}
	}
	return image
}

// resourcesFor is the resources the config gives container c of workload
// name: the last entry whose <resource>:<name>:<container> matches, each
// part possibly with * wildcards.
func resourcesFor(reqs []addonv1alpha1.ContainerResourceRequirements, resource, name, c string) (corev1.ResourceRequirements, bool) {
	var (
		out   corev1.ResourceRequirements
		found bool
	)
	for _, r := range reqs {
		parts := strings.SplitN(r.ContainerID, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if glob(parts[0], resource) && glob(parts[1], name) && glob(parts[2], c) {
			out, found = r.Resources, true
		}
	}
	return out, found
}

// glob matches s against pattern, where * stands for any run of characters.
func glob(pattern, s string) bool {
	quoted := strings.Split(pattern, "*")
	for i := range quoted {
		quoted[i] = regexp.QuoteMeta(quoted[i])
	}
	return regexp.MustCompile("^" + strings.Join(quoted, ".*") + "$").MatchString(s)
}

// clusterRegistries reads a ManagedCluster's image-registries annotation.
func clusterRegistries(annotations map[string]string) ([]addonv1alpha1.ImageMirror, error) {
	v := annotations[addon.ImageRegistriesAnnotation]
	if v == "" {
		return nil, nil
	}
	var parsed struct {
		Registries []addonv1alpha1.ImageMirror `json:"registries"`
	}
	if err := json.Unmarshal([]byte(v), &parsed); err != nil {
		return nil, fmt.Errorf("annotation %s of the ManagedCluster is not {\"registries\":[{\"source\":…,\"mirror\":…}]}: %w", addon.ImageRegistriesAnnotation, err)
	}
	return parsed.Registries, nil
}
