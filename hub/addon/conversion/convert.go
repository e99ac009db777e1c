package conversion

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	addonv1beta1 "github.com/flotilla-io/flotilla/api/addon/v1beta1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// noDefault names a v1beta1 default config that stands for a v1alpha1
// supported config without a default.
const noDefault = "__reserved_no_default__"

// kubeClientSigner is the signer of kubeClient registrations.
const kubeClientSigner = "kubernetes.io/kube-apiserver-client"

var (
	alpha = addonv1alpha1.GroupVersion.String()
	beta  = addonv1beta1.GroupVersion.String()
)

// Convert returns raw, an add-on object of either version, in apiVersion
// to (the group's v1alpha1 or v1beta1).
func Convert(raw []byte, to string) ([]byte, error) {
	var head metav1.TypeMeta
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("read the object's kind: %w", err)
	}
	if to != alpha && to != beta {
		return nil, fmt.Errorf("cannot convert to %s: only %s and %s are served", to, alpha, beta)
	}
	if head.APIVersion != alpha && head.APIVersion != beta {
		return nil, fmt.Errorf("cannot convert from %s: only %s and %s are served", head.APIVersion, alpha, beta)
	}
	if head.APIVersion == to {
		return raw, nil
	}
	switch head.Kind {
	case "ManagedClusterAddOn":
		if to == beta {
			return via(raw, mcaToBeta)
		}
		return via(raw, mcaToAlpha)
	case "ClusterManagementAddOn":
		if to == beta {
			return via(raw, cmaToBeta)
		}
		return via(raw, cmaToAlpha)
	case "AddOnDeploymentConfig":
		return retag(raw, to)
	}
	return nil, fmt.Errorf("cannot convert kind %q: the add-on conversion serves ManagedClusterAddOn, ClusterManagementAddOn and AddOnDeploymentConfig", head.Kind)
}

// via decodes raw as In, converts it and encodes the result.
func via[In, Out any](raw []byte, convert func(*In) *Out) ([]byte, error) {
	in := new(In)
	if err := json.Unmarshal(raw, in); err != nil {
		return nil, err
	}
	return json.Marshal(convert(in))
}

// retag changes only the apiVersion of an object whose fields are the same
// in both versions.
func retag(raw []byte, to string) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	obj["apiVersion"] = to
	return json.Marshal(obj)
}

func mcaToBeta(in *addonv1alpha1.ManagedClusterAddOn) *addonv1beta1.ManagedClusterAddOn {
	out := &addonv1beta1.ManagedClusterAddOn{
		TypeMeta:   metav1.TypeMeta{APIVersion: beta, Kind: in.Kind},
		ObjectMeta: in.ObjectMeta,
		Spec:       addonv1beta1.ManagedClusterAddOnSpec{Configs: in.Spec.Configs},
	}
	if ns := in.Spec.InstallNamespace; ns != "" {
		out.Annotations = withAnnotation(out.Annotations, addon.InstallNamespaceAnnotation, ns)
	}
	s := in.Status
	out.Status = addonv1beta1.ManagedClusterAddOnStatus{
		Conditions:       s.Conditions,
		RelatedObjects:   s.RelatedObjects,
		AddOnMeta:        s.AddOnMeta,
		SupportedConfigs: s.SupportedConfigs,
		Namespace:        s.Namespace,
		HealthCheck:      s.HealthCheck,
	}
	for _, r := range s.ConfigReferences {
		out.Status.ConfigReferences = append(out.Status.ConfigReferences, addonv1beta1.ConfigReference{
			ConfigGroupResource:    r.ConfigGroupResource,
			LastObservedGeneration: r.LastObservedGeneration,
			DesiredConfig:          r.DesiredConfig,
			LastAppliedConfig:      r.LastAppliedConfig,
		})
	}
	for _, r := range s.Registrations {
		if r.SignerName == kubeClientSigner {
			out.Status.Registrations = append(out.Status.Registrations, addonv1beta1.RegistrationConfig{
				Type: "kubeClient",
				KubeClient: &addonv1beta1.KubeClientConfig{
					Subject: addonv1beta1.KubeClientSubject{User: r.Subject.User, Groups: r.Subject.Groups},
					Driver:  s.KubeClientDriver,
				},
			})
			continue
		}
		reg := addonv1beta1.RegistrationConfig{Type: "customSigner", CustomSigner: &addonv1beta1.CustomSignerConfig{SignerName: r.SignerName}}
		if sub := r.Subject; sub.User != "" || len(sub.Groups) > 0 || len(sub.OrganizationUnits) > 0 {
			reg.CustomSigner.Subject = &addonv1beta1.Subject{User: sub.User, Groups: sub.Groups, OrganizationUnits: sub.OrganizationUnits}
		}
		out.Status.Registrations = append(out.Status.Registrations, reg)
	}
	return out
}

func mcaToAlpha(in *addonv1beta1.ManagedClusterAddOn) *addonv1alpha1.ManagedClusterAddOn {
	out := &addonv1alpha1.ManagedClusterAddOn{
		TypeMeta:   metav1.TypeMeta{APIVersion: alpha, Kind: in.Kind},
		ObjectMeta: in.ObjectMeta,
		Spec:       addonv1alpha1.ManagedClusterAddOnSpec{Configs: in.Spec.Configs},
	}
	if ns, ok := in.Annotations[addon.InstallNamespaceAnnotation]; ok {
		out.Spec.InstallNamespace = ns
		out.Annotations = withoutAnnotation(out.Annotations, addon.InstallNamespaceAnnotation)
	}
	s := in.Status
	out.Status = addonv1alpha1.ManagedClusterAddOnStatus{
		Conditions:       s.Conditions,
		RelatedObjects:   s.RelatedObjects,
		AddOnMeta:        s.AddOnMeta,
		SupportedConfigs: s.SupportedConfigs,
		Namespace:        s.Namespace,
		HealthCheck:      s.HealthCheck,
	}
	for _, r := range s.ConfigReferences {
		ref := addonv1alpha1.ConfigReference{
			ConfigGroupResource:    r.ConfigGroupResource,
			LastObservedGeneration: r.LastObservedGeneration,
			DesiredConfig:          r.DesiredConfig,
			LastAppliedConfig:      r.LastAppliedConfig,
		}
		if r.DesiredConfig != nil {
			ref.ConfigReferent = r.DesiredConfig.ConfigReferent
		}
		out.Status.ConfigReferences = append(out.Status.ConfigReferences, ref)
	}
	for _, r := range s.Registrations {
		switch {
		case r.KubeClient != nil:
			out.Status.Registrations = append(out.Status.Registrations, addonv1alpha1.RegistrationConfig{
				SignerName: kubeClientSigner,
				Subject:    addonv1alpha1.Subject{User: r.KubeClient.Subject.User, Groups: r.KubeClient.Subject.Groups},
			})
			if out.Status.KubeClientDriver == "" {
				out.Status.KubeClientDriver = r.KubeClient.Driver
			}
		case r.CustomSigner != nil:
			reg := addonv1alpha1.RegistrationConfig{SignerName: r.CustomSigner.SignerName}
			if sub := r.CustomSigner.Subject; sub != nil {
				reg.Subject = addonv1alpha1.Subject{User: sub.User, Groups: sub.Groups, OrganizationUnits: sub.OrganizationUnits}
			}
			out.Status.Registrations = append(out.Status.Registrations, reg)
		case r.Type == "kubeClient":
			out.Status.Registrations = append(out.Status.Registrations, addonv1alpha1.RegistrationConfig{SignerName: kubeClientSigner})
		}
	}
	return out
}

func cmaToBeta(in *addonv1alpha1.ClusterManagementAddOn) *addonv1beta1.ClusterManagementAddOn {
	out := &addonv1beta1.ClusterManagementAddOn{
		TypeMeta:   metav1.TypeMeta{APIVersion: beta, Kind: in.Kind},
		ObjectMeta: in.ObjectMeta,
		Spec: addonv1beta1.ClusterManagementAddOnSpec{
			AddOnMeta:       in.Spec.AddOnMeta,
			InstallStrategy: in.Spec.InstallStrategy,
		},
		Status: addonv1beta1.ClusterManagementAddOnStatus{
			DefaultConfigReferences: in.Status.DefaultConfigReferences,
			InstallProgressions:     in.Status.InstallProgressions,
		},
	}
	for _, c := range in.Spec.SupportedConfigs {
		cfg := addonv1alpha1.AddOnConfig{ConfigGroupResource: c.ConfigGroupResource, ConfigReferent: addonv1alpha1.ConfigReferent{Name: noDefault}}
		if c.DefaultConfig != nil {
			cfg.ConfigReferent = *c.DefaultConfig
		}
		out.Spec.DefaultConfigs = append(out.Spec.DefaultConfigs, cfg)
	}
	return out
}

func cmaToAlpha(in *addonv1beta1.ClusterManagementAddOn) *addonv1alpha1.ClusterManagementAddOn {
	out := &addonv1alpha1.ClusterManagementAddOn{
		TypeMeta:   metav1.TypeMeta{APIVersion: alpha, Kind: in.Kind},
		ObjectMeta: in.ObjectMeta,
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{
			AddOnMeta:       in.Spec.AddOnMeta,
			InstallStrategy: in.Spec.InstallStrategy,
		},
		Status: addonv1alpha1.ClusterManagementAddOnStatus{
			DefaultConfigReferences: in.Status.DefaultConfigReferences,
			InstallProgressions:     in.Status.InstallProgressions,
		},
	}
	for _, c := range in.Spec.DefaultConfigs {
		meta := addonv1alpha1.ConfigMeta{ConfigGroupResource: c.ConfigGroupResource}
		if c.Name != noDefault {
			ref := c.ConfigReferent
			meta.DefaultConfig = &ref
		}
		out.Spec.SupportedConfigs = append(out.Spec.SupportedConfigs, meta)
	}
	return out
}

func withAnnotation(a map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(a)+1)
	for key, val := range a {
		out[key] = val
	}
	out[k] = v
	return out
}

func withoutAnnotation(a map[string]string, k string) map[string]string {
	if len(a) == 1 {
		return nil
	}
	out := make(map[string]string, len(a))
	for key, val := range a {
		if key != k {
			out[key] = val
		}
	}
	return out
}
