package engine

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	sigsjson "sigs.k8s.io/json"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/policykinds"
)

// GatekeeperWebhookName is the ValidatingWebhookConfiguration through
// which Gatekeeper denies: without it a deny constraint denies nothing.
const GatekeeperWebhookName = "gatekeeper-validating-webhook-configuration"

// decodeKind decodes template i of p, of a kind isOtherKind accepts,
// into t: strictly for a CertificatePolicy; a Gatekeeper object as it is,
// with the Policy's remediationAction as a constraint's enforcementAction
// (inform: warn, enforce: deny), as OCM's framework sets it.
func decodeKind(t *PolicyTemplate, p *policyv1.Policy, raw []byte) {
	t.Err = nil
	if policykinds.IsCertificatePolicy(t.Kind, t.APIVersion) {
		cp := &policyv1.CertificatePolicy{}
		if err := strictDecode(raw, cp); err != nil {
			t.Err = fmt.Errorf("Failed to create policy template: CertificatePolicy %s at index %d: %w", t.Name, t.Index, err)
			return
		}
		for field, pattern := range map[string]string{"spec.allowedSANPattern": cp.Spec.AllowedSANPattern, "spec.disallowedSANPattern": cp.Spec.DisallowedSANPattern} {
			if _, err := regexp.Compile(pattern); err != nil {
				t.Err = fmt.Errorf("Failed to create policy template: CertificatePolicy %s at index %d: %s: not a Go regular expression: %w", t.Name, t.Index, field, err)
				return
			}
		}
		if p.Spec.RemediationAction != "" {
			cp.Spec.RemediationAction = p.Spec.RemediationAction
		}
		if cp.Spec.RemediationAction == "" {
			cp.Spec.RemediationAction = policyv1.Inform
		}
		t.CertificatePolicy = cp
		return
	}
	u := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(raw, &u.Object); err != nil {
		t.Err = fmt.Errorf("Failed to decode policy template with err: %w", err)
		return
	}
	if u.GetNamespace() != "" {
		// Gatekeeper's objects are cluster-scoped.
		unstructured.RemoveNestedField(u.Object, "metadata", "namespace")
	}
	if u.GroupVersionKind().Group == policykinds.GatekeeperConstraintsGroup {
		if _, ok := u.Object["spec"].(map[string]any); !ok && u.Object["spec"] != nil {
			t.Err = fmt.Errorf("Failed to decode policy template with err: the spec of constraint %s at index %d is not an object", t.Name, t.Index)
			return
		}
		switch {
		case p.Spec.RemediationAction.IsInform():
			_ = unstructured.SetNestedField(u.Object, "warn", "spec", "enforcementAction")
		case p.Spec.RemediationAction.IsEnforce():
			_ = unstructured.SetNestedField(u.Object, "deny", "spec", "enforcementAction")
		}
	}
	t.Gatekeeper = u
}

// strictDecode decodes data into v, failing on unknown and duplicate
// fields, as the API server's strict field validation would.
func strictDecode(data []byte, v any) error {
	strictErrs, err := sigsjson.UnmarshalStrict(data, v, sigsjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	if len(strictErrs) > 0 {
		msgs := make([]string, len(strictErrs))
		for i, e := range strictErrs {
			msgs[i] = e.Error()
		}
		return errors.New("strict decoding error: " + strings.Join(msgs, ", "))
	}
	return nil
}
