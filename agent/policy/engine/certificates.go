package engine

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// DefaultMinimumDuration is the minimumDuration of a CertificatePolicy
// that sets none: OCM's cert-policy-controller's default.
const DefaultMinimumDuration = 672 * time.Hour

// Labels of a Secret that the certificate checks read, as OCM's
// cert-policy-controller does.
const (
	// certificateKeyLabel names the key of the Secret holding the
	// certificate; tls.crt when unset.
	certificateKeyLabel = "certificate_key_name"
	// certificateNameLabel and certManagerNameLabel name the certificate
	// in messages instead of the Secret.
	certificateNameLabel = "certificate-name"
	certManagerNameLabel = "certmanager.k8s.io/certificate-name"
)

var secretGVK = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}

// certificate is one certificate found in a Secret, and what it violates.
type certificate struct {
	namespace, secret, name string
	cert                    policyv1.Certificate
	notAfter                time.Time
	expiring, tooLong, sans bool
}

// evaluateCertificates checks the certificates of the Secrets that cp
// selects, as OCM's cert-policy-controller does, and words the outcome
// in its messages. next is when the outcome changes by time alone: when
// the first compliant certificate comes within its minimum duration.
func evaluateCertificates(ctx context.Context, cp *policyv1.CertificatePolicy, r Reader, now time.Time) (*KindResult, error) {
	sel := cp.Spec.NamespaceSelector
	e := &evaluator{ctx: ctx, r: r, cp: &policyv1.ConfigurationPolicy{Spec: policyv1.ConfigurationPolicySpec{NamespaceSelector: policyv1.NamespaceSelector{
		Include: sel.Include, Exclude: sel.Exclude, MatchLabels: sel.MatchLabels, MatchExpressions: sel.MatchExpressions,
	}}}}
	namespaces, err := e.selectNamespaces()
	if err != nil {
		return nil, fmt.Errorf("select the namespaces of CertificatePolicy %s: %w", cp.Name, err)
	}
	m, err := r.Mapping(secretGVK)
	if err != nil {
		return nil, err
	}
	set := labels.Set{}
	for k, v := range cp.Spec.LabelSelector {
		set[k] = string(v)
	}
	res := &KindResult{Certificates: &policyv1.CertificatePolicyStatus{}}
	var bad []certificate
	for _, ns := range namespaces {
		secrets, err := r.List(ctx, m, ns, labels.SelectorFromSet(set))
		if err != nil {
			return nil, fmt.Errorf("list the Secrets of namespace %s: %w", ns, err)
		}
		sortByName(secrets)
		details := policyv1.CertificateCompliancyDetails{}
		seen := map[string]bool{}
		for _, s := range secrets {
			c, ok := parseCertificate(s, now)
			if !ok {
				continue
			}
			checkCertificate(&c, cp)
			if !c.expiring && !c.tooLong && !c.sans {
				if d := minimumFor(cp, c.cert.CA); c.notAfter.Add(-d).After(now) {
					res.nextAfter(c.notAfter.Add(-d).Sub(now))
				}
				continue
			}
			if seen[c.name] {
				continue
			}
			seen[c.name] = true
			bad = append(bad, c)
			if details.NonCompliantCertificatesList == nil {
				details.NonCompliantCertificatesList = map[string]policyv1.Certificate{}
			}
			details.NonCompliantCertificatesList[c.name] = c.cert
			details.NonCompliantCertificates++
		}
		details.Message = fmt.Sprintf("Found %d non compliant certificates in the namespace %s", details.NonCompliantCertificates, ns)
		if res.Certificates.CompliancyDetails == nil {
			res.Certificates.CompliancyDetails = map[string]policyv1.CertificateCompliancyDetails{}
		}
		res.Certificates.CompliancyDetails[ns] = details
	}
	res.State = policyv1.Compliant
	if len(bad) > 0 {
		res.State = policyv1.NonCompliant
	}
	res.Certificates.ComplianceState = res.State
	res.Message = certificateMessage(cp, namespaces, bad)
	res.Results = certificateResults(cp, bad)
	return res, nil
}

// parseCertificate reads the first certificate of a Secret's
// certificate key; ok is false when it holds none.
func parseCertificate(s *unstructured.Unstructured, now time.Time) (certificate, bool) {
	key := "tls.crt"
	if k := s.GetLabels()[certificateKeyLabel]; k != "" {
		key = k
	}
	encoded, _, _ := unstructured.NestedString(s.Object, "data", key)
	data, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(data) == 0 {
		return certificate{}, false
	}
	var x *x509.Certificate
	for block, rest := pem.Decode(data); block != nil && x == nil; block, rest = pem.Decode(rest) {
		if block.Type == "CERTIFICATE" {
			x, _ = x509.ParseCertificate(block.Bytes)
		}
	}
	if x == nil {
		return certificate{}, false
	}
	name := s.GetName()
	if l := s.GetLabels(); l[certificateNameLabel] != "" {
		name = l[certificateNameLabel]
	} else if l[certManagerNameLabel] != "" {
		name = l[certManagerNameLabel]
	}
	return certificate{
		namespace: s.GetNamespace(), secret: s.GetName(), name: name, notAfter: x.NotAfter,
		cert: policyv1.Certificate{
			Secret: s.GetName(), Expiration: x.NotAfter.UTC().Format(time.RFC3339), Expiry: int64(x.NotAfter.Sub(now)),
			CA: x.IsCA, Duration: int64(x.NotAfter.Sub(x.NotBefore)), Sans: x.DNSNames,
		},
	}, true
}

// minimumFor is the minimum duration a certificate must have left.
func minimumFor(cp *policyv1.CertificatePolicy, ca bool) time.Duration {
	if ca && cp.Spec.MinimumCADuration != nil {
		return cp.Spec.MinimumCADuration.Duration
	}
	if cp.Spec.MinimumDuration != nil {
		return cp.Spec.MinimumDuration.Duration
	}
	return DefaultMinimumDuration
}

// checkCertificate marks what c violates: it expires within its minimum
// duration, is valid for longer than its maximum, or has a DNS SAN that
// does not match allowedSANPattern or matches disallowedSANPattern.
func checkCertificate(c *certificate, cp *policyv1.CertificatePolicy) {
	c.expiring = time.Duration(c.cert.Expiry) < minimumFor(cp, c.cert.CA)
	switch {
	case c.cert.CA && cp.Spec.MaximumCADuration != nil:
		c.tooLong = time.Duration(c.cert.Duration) > cp.Spec.MaximumCADuration.Duration
	case cp.Spec.MaximumDuration != nil:
		c.tooLong = time.Duration(c.cert.Duration) > cp.Spec.MaximumDuration.Duration
	}
	allowed, _ := regexp.Compile(cp.Spec.AllowedSANPattern)
	disallowed, _ := regexp.Compile(cp.Spec.DisallowedSANPattern)
	for _, san := range c.cert.Sans {
		if (cp.Spec.AllowedSANPattern != "" && !allowed.MatchString(san)) || (cp.Spec.DisallowedSANPattern != "" && disallowed.MatchString(san)) {
			c.sans = true
		}
	}
}

// sanPatterns names the SAN patterns, as OCM's messages do.
func sanPatterns(cp *policyv1.CertificatePolicy) string {
	p := ""
	if cp.Spec.AllowedSANPattern != "" {
		p = "Allowed: " + cp.Spec.AllowedSANPattern
	}
	if cp.Spec.DisallowedSANPattern != "" {
		p += " Disallowed: " + cp.Spec.DisallowedSANPattern
	}
	return p
}

// certificateMessage is the history message of a CertificatePolicy, in
// the words and spacing of OCM's cert-policy-controller: per violation,
// the count and the violating certificates as namespace:secret, the
// first without, the others with a leading space, one per line.
func certificateMessage(cp *policyv1.CertificatePolicy, namespaces []string, bad []certificate) string {
	if len(bad) == 0 {
		if len(namespaces) == 0 {
			return string(policyv1.Compliant) + "; No namespaces matched the namespace selector."
		}
		return string(policyv1.Compliant)
	}
	type group struct {
		what  string
		certs []string
	}
	groups := make([]group, 5)
	for _, c := range bad {
		ref := c.namespace + ":" + c.secret
		caMin, caMax := c.cert.CA && cp.Spec.MinimumCADuration != nil, c.cert.CA && cp.Spec.MaximumCADuration != nil
		switch {
		case c.expiring && caMin:
			groups[1].certs = append(groups[1].certs, ref)
		case c.expiring:
			groups[0].certs = append(groups[0].certs, ref)
		}
		switch {
		case c.tooLong && caMax:
			groups[3].certs = append(groups[3].certs, ref)
		case c.tooLong:
			groups[2].certs = append(groups[2].certs, ref)
		}
		if c.sans {
			groups[4].certs = append(groups[4].certs, ref)
		}
	}
	groups[0].what = "certificates expire in less than " + minimumFor(&policyv1.CertificatePolicy{Spec: policyv1.CertificatePolicySpec{MinimumDuration: cp.Spec.MinimumDuration}}, false).String()
	if cp.Spec.MinimumCADuration != nil {
		groups[1].what = "CA certificates expire in less than " + cp.Spec.MinimumCADuration.Duration.String()
	}
	if cp.Spec.MaximumDuration != nil {
		groups[2].what = "certificates exceed the maximum duration of " + cp.Spec.MaximumDuration.Duration.String()
	}
	if cp.Spec.MaximumCADuration != nil {
		groups[3].what = "CA certificates exceed the maximum duration of " + cp.Spec.MaximumCADuration.Duration.String()
	}
	groups[4].what = "certificates defined SAN entries do not match pattern " + sanPatterns(cp)
	var b strings.Builder
	for i, g := range groups {
		if len(g.certs) == 0 {
			continue
		}
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%d %s: %s\n", len(g.certs), g.what, strings.Join(g.certs, ", "))
	}
	return string(policyv1.NonCompliant) + "; " + strings.TrimSuffix(b.String(), "\n")
}

// certificateResults are the violating certificates, one object each,
// with what each violates.
func certificateResults(cp *policyv1.CertificatePolicy, bad []certificate) *policyv1.TemplateResults {
	out := &policyv1.TemplateResults{}
	sort.SliceStable(bad, func(i, j int) bool {
		return bad[i].namespace < bad[j].namespace || (bad[i].namespace == bad[j].namespace && bad[i].secret < bad[j].secret)
	})
	for _, c := range bad {
		var why []string
		if c.expiring {
			why = append(why, c.name+" expires on "+c.cert.Expiration)
		}
		if c.tooLong {
			why = append(why, fmt.Sprintf("%s duration too long %s", c.name, time.Duration(c.cert.Duration)))
		}
		if c.sans {
			why = append(why, c.name+" SAN entry found not matching pattern "+sanPatterns(cp))
		}
		out.Objects = append(out.Objects, policyv1.ObjectResult{
			Object:    policyv1.ObjectResource{Kind: "Secret", APIVersion: "v1", Metadata: policyv1.ObjectMetadata{Name: c.secret, Namespace: c.namespace}},
			Compliant: policyv1.NonCompliant, Reason: "Certificate does not comply", Message: strings.Join(why, "; "),
		})
	}
	return out
}
