package addon

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// secretKey names a registration's Secret on the managed cluster.
type secretKey = types.NamespacedName

// registration is one certificate an add-on's agent is to have.
type registration struct {
	addon, signer string
	secret        secretKey
	// subject is the certificate's subject, defaulted.
	subject addonv1alpha1.Subject
	// hash changes whenever the registration or the install namespace do.
	hash string
}

func (r *registration) kubeClient() bool { return r.signer == addon.KubeAPIServerClientSigner }

// installNamespace is where the add-on's agent runs: status.namespace,
// else the installNamespace the user gave, else the default.
func installNamespace(mca *addonv1alpha1.ManagedClusterAddOn) string {
	switch {
	case mca.Status.Namespace != "":
		return mca.Status.Namespace
	case mca.Spec.InstallNamespace != "":
		return mca.Spec.InstallNamespace
	case mca.Annotations[addon.InstallNamespaceAnnotation] != "":
		return mca.Annotations[addon.InstallNamespaceAnnotation]
	}
	return addon.DefaultInstallNamespace
}

// hasKubeClient says whether the add-on asks for a hub kubeconfig.
func hasKubeClient(mca *addonv1alpha1.ManagedClusterAddOn) bool {
	return slices.ContainsFunc(mca.Status.Registrations, func(r addonv1alpha1.RegistrationConfig) bool {
		return r.SignerName == addon.KubeAPIServerClientSigner
	})
}

// registrations are the certificates mca's agent in cluster c is to have.
func registrations(c string, mca *addonv1alpha1.ManagedClusterAddOn) []registration {
	ns := installNamespace(mca)
	var regs []registration
	for _, rc := range mca.Status.Registrations {
		reg := registration{addon: mca.Name, signer: rc.SignerName, subject: defaultSubject(c, mca.Name, rc.Subject)}
		if reg.kubeClient() {
			reg.secret = secretKey{Namespace: ns, Name: addon.KubeconfigSecretName(mca.Name)}
		} else {
			reg.secret = secretKey{Namespace: ns, Name: addon.CustomSignerSecretName(mca.Name, rc.SignerName)}
		}
		if slices.ContainsFunc(regs, func(r registration) bool { return r.secret == reg.secret }) {
			continue
		}
		b, _ := json.Marshal(struct {
			Signer    string                `json:"signer"`
			Subject   addonv1alpha1.Subject `json:"subject"`
			Namespace string                `json:"namespace"`
		}{reg.signer, reg.subject, ns})
		sum := sha256.Sum256(b)
		reg.hash = hex.EncodeToString(sum[:16])
		regs = append(regs, reg)
	}
	return regs
}

// defaultSubject is s, or when it names no user the contract's default
// user and group of add-on a's agent in cluster c (its OUs kept).
func defaultSubject(c, a string, s addonv1alpha1.Subject) addonv1alpha1.Subject {
	s = *s.DeepCopy()
	if s.User == "" {
		s.User = addon.AgentUser(c, a, a)
		if len(s.Groups) == 0 {
			s.Groups = []string{addon.ClusterAddOnGroup(c, a)}
		}
	}
	return s
}
