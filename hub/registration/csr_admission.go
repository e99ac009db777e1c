package registration

import (
	"context"
	"fmt"

	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apiserver/pkg/admission"
	certificatesapi "k8s.io/kubernetes/pkg/apis/certificates"

	"github.com/flotilla-io/flotilla/internal/addon"
	"github.com/flotilla-io/flotilla/internal/identity"
)

// NewCSRSubjectAdmission returns the admission check, run inside the
// hub's embedded API server, that refuses a CSR created by a cluster's
// agent whose certificate request names another cluster: its subject CN
// must be a user of the requester's own cluster, and every subject O of
// the form system:open-cluster-management:<cluster> one of its own
// clusters. Bootstrap identities, which join new clusters, and hub admins
// are not checked, but for a join token made for one cluster (flotilla
// init --cluster-name), which is held to that cluster alike. The request's
// subject is DER inside the object, beyond
// a ValidatingAdmissionPolicy's CEL; the label is checked by one
// (AgentCSRPolicyName), which also holds on hubs run against an existing
// cluster.
func NewCSRSubjectAdmission() admission.ValidationInterface {
	return &csrSubjectAdmission{Handler: admission.NewHandler(admission.Create)}
}

type csrSubjectAdmission struct {
	*admission.Handler
}

func (a *csrSubjectAdmission) Validate(_ context.Context, attrs admission.Attributes, _ admission.ObjectInterfaces) error {
	if attrs.GetResource().GroupResource() != certificatesv1.Resource("certificatesigningrequests") || attrs.GetSubresource() != "" {
		return nil
	}
	u := attrs.GetUserInfo()
	if u == nil {
		return nil
	}
	own, who, whose := clustersOf(u), "an agent of cluster", "its own cluster's"
	if len(own) == 0 {
		own, who, whose = tokenClustersOf(u), "joining with a token for cluster", "that cluster's"
	}
	if len(own) == 0 {
		return nil
	}
	var request []byte
	var signer string
	switch csr := attrs.GetObject().(type) {
	case *certificatesapi.CertificateSigningRequest:
		request, signer = csr.Spec.Request, csr.Spec.SignerName
	case *certificatesv1.CertificateSigningRequest:
		request, signer = csr.Spec.Request, csr.Spec.SignerName
	default:
		return nil
	}
	if err := checkOwnSubject(request, signer, own); err != nil {
		return admission.NewForbidden(attrs, fmt.Errorf("user %s is %s %s and may ask only for %s certificates: %w",
			u.GetName(), who, strings.Join(own, ", "), whose, err))
	}
	return nil
}

// checkOwnSubject requires a certificate request whose subject names only
// the clusters own: an agent of one of them, or an add-on's agent in one
// of them (docs/addons.md, section 5) with only that add-on's groups. For
// a signer outside kubernetes.io (an add-on's custom signer, whose
// certificates the hub does not trust) any subject is allowed whose
// names of this protocol's identities are those of the clusters own.
func checkOwnSubject(request []byte, signer string, own []string) error {
	req, err := identity.ParseCertificateRequest(request)
	if err != nil {
		return err
	}
	cn := req.Subject.CommonName
	if c, a, _, ok := addon.ParseAgentUser(cn); ok {
		if !slices.Contains(own, c) {
			return fmt.Errorf("the request's subject CN %q is an add-on agent of another cluster", cn)
		}
		for _, o := range req.Subject.Organization {
			if gc, ga, ok := addon.ParseClusterAddOnGroup(o); ok && gc == c && ga == a || o == addon.AddOnGroup(a) || o == addon.AuthenticatedGroup {
				continue
			}
			return fmt.Errorf("the request's subject O %q is not a group of add-on %s in cluster %s", o, a, c)
		}
		return nil
	}
	if !strings.HasPrefix(signer, "kubernetes.io/") {
		for _, name := range append([]string{cn}, req.Subject.Organization...) {
			if !ownName(name, own) {
				return fmt.Errorf("the request's subject names %q, an identity of another cluster", name)
			}
		}
		return nil
	}
	if c, _, ok := identity.ParseAgentUser(cn); !ok || !slices.Contains(own, c) {
		return fmt.Errorf("the request's subject CN %q is not a user %s<cluster>:<agent> of its cluster", cn, identity.Prefix)
	}
	for _, o := range req.Subject.Organization {
		if o == identity.ManagedClustersGroup {
			continue
		}
		if c, ok := strings.CutPrefix(o, identity.Prefix); !ok || !slices.Contains(own, c) {
			return fmt.Errorf("the request's subject O %q is not a group of its cluster", o)
		}
	}
	return nil
}

// ownName says whether name, a subject's CN or O, names no identity of
// this protocol (system:open-cluster-management:…) other than those of
// the clusters own and their add-ons.
func ownName(name string, own []string) bool {
	rest, ok := strings.CutPrefix(name, identity.Prefix)
	if !ok || name == identity.ManagedClustersGroup || name == addon.AuthenticatedGroup {
		return true
	}
	if _, ok := addon.ParseAddOnGroup(name); ok {
		return true
	}
	if c, _, _, ok := addon.ParseAgentUser(name); ok {
		return slices.Contains(own, c)
	}
	if c, _, ok := addon.ParseClusterAddOnGroup(name); ok {
		return slices.Contains(own, c)
	}
	if c, _, ok := identity.ParseAgentUser(name); ok {
		return slices.Contains(own, c)
	}
	return slices.Contains(own, rest)
}
