package registration

import (
	"crypto/x509"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// checkRequester says why the requester of csr is not the accepted agent
// of cluster, or nil.
func checkRequester(csr *certificatesv1.CertificateSigningRequest, cluster *clusterv1.ManagedCluster) error {
	c, agent, ok := identity.ParseAgentUser(csr.Spec.Username)
	switch {
	case !ok:
		return fmt.Errorf("requester %q is not a cluster agent (%s<cluster>:<agent>)", csr.Spec.Username, identity.Prefix)
	case c != cluster.Name:
		return fmt.Errorf("requester %q is an agent of cluster %q, but the CSR is for cluster %q", csr.Spec.Username, c, cluster.Name)
	case !cluster.Spec.HubAcceptsClient || !cluster.DeletionTimestamp.IsZero():
		return fmt.Errorf("cluster %q is not accepted, or is being deleted", cluster.Name)
	}
	accepted := cluster.Annotations[identity.AcceptedAgentAnnotation]
	if accepted == "" || accepted != agent {
		return fmt.Errorf("requester %q is not the accepted agent of cluster %q (%q)", csr.Spec.Username, cluster.Name, accepted)
	}
	return nil
}

// checkRequest checks csr of cluster c's add-on a against registration
// reg of a's template. It returns the parsed request.
func checkRequest(csr *certificatesv1.CertificateSigningRequest, c, a string, reg *addonv1alpha1.RegistrationSpec) (*x509.CertificateRequest, error) {
	req, err := identity.ParseCertificateRequest(csr.Spec.Request)
	if err != nil {
		return nil, err
	}
	if err := identity.CheckClientUsages(csr.Spec.Usages); err != nil {
		return nil, err
	}
	san := a + "." + addon.AddOnDNSSuffix
	if len(req.EmailAddresses)+len(req.IPAddresses)+len(req.URIs) > 0 || slices.ContainsFunc(req.DNSNames, func(d string) bool { return d != san }) {
		return nil, fmt.Errorf("it asks for subject alternative names other than DNS %s", san)
	}
	if reg.Type == registrationKubeClient {
		return req, checkKubeClientSubject(req, c, a)
	}
	return req, checkCustomSubject(req, c, a)
}

// checkKubeClientSubject is OCM's default check of a template add-on's
// kubeClient CSR: CN the template agent's user, O its two groups and at
// most system:authenticated beside them.
func checkKubeClientSubject(req *x509.CertificateRequest, c, a string) error {
	if want := addon.AgentUser(c, a, a+"-agent"); req.Subject.CommonName != want {
		return fmt.Errorf("its subject CN %q is not %q", req.Subject.CommonName, want)
	}
	orgs := req.Subject.Organization
	want := addon.AgentGroups(c, a)
	if len(orgs) < 2 || len(orgs) > 3 || !slices.Contains(orgs, want[0]) || !slices.Contains(orgs, want[1]) ||
		slices.ContainsFunc(orgs, func(o string) bool { return !slices.Contains(want, o) && o != addon.AuthenticatedGroup }) {
		return fmt.Errorf("its subject O %q is not the groups %q (with at most %s beside them)", orgs, want, addon.AuthenticatedGroup)
	}
	return nil
}

// checkCustomSubject requires that every name of the subject that is a
// Flotilla or OCM identity be add-on a's own in cluster c.
func checkCustomSubject(req *x509.CertificateRequest, c, a string) error {
	own := func(name string, user bool) bool {
		if !strings.HasPrefix(name, identity.Prefix) {
			return true
		}
		if user {
			uc, ua, _, ok := addon.ParseAgentUser(name)
			return ok && uc == c && ua == a
		}
		if name == addon.AddOnGroup(a) {
			return true
		}
		gc, ga, ok := addon.ParseClusterAddOnGroup(name)
		return ok && gc == c && ga == a
	}
	if !own(req.Subject.CommonName, true) {
		return fmt.Errorf("its subject CN %q is an identity other than add-on %s's agent in cluster %s", req.Subject.CommonName, a, c)
	}
	for _, o := range req.Subject.Organization {
		if !own(o, false) {
			return fmt.Errorf("its subject O %q is a group other than add-on %s's in cluster %s", o, a, c)
		}
	}
	return nil
}

// Registration types of an AddOnTemplate.
const (
	registrationKubeClient   = "KubeClient"
	registrationCustomSigner = "CustomSigner"
)

// templateRegistration is the registration of tmpl for signer, or nil.
func templateRegistration(tmpl *addonv1alpha1.AddOnTemplate, signer string) *addonv1alpha1.RegistrationSpec {
	for i := range tmpl.Spec.Registration {
		r := &tmpl.Spec.Registration[i]
		switch {
		case strings.EqualFold(r.Type, registrationKubeClient) && signer == addon.KubeAPIServerClientSigner:
			r.Type = registrationKubeClient
			return r
		case strings.EqualFold(r.Type, registrationCustomSigner) && r.CustomSigner != nil && r.CustomSigner.SignerName == signer && signer != addon.KubeAPIServerClientSigner:
			r.Type = registrationCustomSigner
			return r
		}
	}
	return nil
}

// templateName is the AddOnTemplate mca uses: its status.configReferences
// entry, else cma's default; "" when the add-on is no template add-on.
func templateName(cma *addonv1alpha1.ClusterManagementAddOn, mca *addonv1alpha1.ManagedClusterAddOn) string {
	isTemplate := func(g addonv1alpha1.ConfigGroupResource) bool {
		return g.Group == addon.Group && g.Resource == addon.ConfigResourceTemplates
	}
	if mca != nil {
		for _, ref := range mca.Status.ConfigReferences {
			if !isTemplate(ref.ConfigGroupResource) {
				continue
			}
			if ref.DesiredConfig != nil && ref.DesiredConfig.Name != "" {
				return ref.DesiredConfig.Name
			}
			if ref.Name != "" {
				return ref.Name
			}
		}
	}
	for _, sc := range cma.Spec.SupportedConfigs {
		if isTemplate(sc.ConfigGroupResource) && sc.DefaultConfig != nil && sc.DefaultConfig.Name != "" {
			return sc.DefaultConfig.Name
		}
	}
	return ""
}

// hubManaged says whether the hub's add-on manager runs the add-on.
func hubManaged(cma *addonv1alpha1.ClusterManagementAddOn) bool {
	v, ok := cma.Annotations[addon.LifecycleAnnotation]
	return !ok || v == "" || v == addon.LifecycleAddOnManager
}
