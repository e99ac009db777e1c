package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/policytemplate"
)

// WebhookPath is where the hub's webhook server serves Policy admission,
// OCM's path for its propagator's webhook.
const WebhookPath = "/validate-policy-open-cluster-management-io-v1-policy"

// Validator is the admission handler for root Policies. It refuses, as
// OCM's propagator webhook does, a new root whose namespace and name are
// too long to name its copies, and, as the API server's strict field
// validation would, a Policy with a field its schema does not know: the
// CRD keeps such fields (see api/policy/v1) so that this handler sees them
// instead of the API server dropping them in silence.
type Validator struct{}

var _ admission.Handler = Validator{}

// Handle admits or refuses one CREATE or UPDATE of a Policy.
func (Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	obj := map[string]any{}
	if err := json.Unmarshal(req.Object.Raw, &obj); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode the Policy: %w", err))
	}
	var p policyv1.Policy
	// Strict decoding fills in every known field, whatever it reports.
	decodeErr := policytemplate.DecodePolicy(obj, &p)
	if p.Namespace == "" {
		p.Namespace = req.Namespace
	}
	if req.Operation == admissionv1.Create {
		if _, replicated := p.Labels[policyv1.RootPolicyLabel]; !replicated && nameTooLong(&p) {
			return refuse(&p, metav1.CauseTypeTooLong, "metadata.name", fmt.Sprintf(
				"its namespace and name are %d characters together (namespace %d, name %d), the most is %d: the hub names its copies %q, which must fit %d characters; shorten the namespace or the name",
				len(p.Namespace)+len(p.Name), len(p.Namespace), len(p.Name), maxRootNameLength, rootName(p.Namespace, p.Name), maxRootNameLength+1))
		}
	}
	if decodeErr == nil {
		return admission.Allowed("")
	}
	if req.Operation == admissionv1.Update && sameDecodeError(req.OldObject.Raw, decodeErr) {
		// A Policy stored with these fields before this check (or while
		// no hub served it) must stay editable otherwise: the hub removes
		// its finalizer, and deleting it must not hang.
		return admission.Allowed("")
	}
	return refuse(&p, metav1.CauseTypeFieldValueInvalid, "", decodeErr.Error()+"; remove or correct the field (see `kubectl explain policy.spec`)")
}

// sameDecodeError says whether the old object fails to decode the same way.
func sameDecodeError(old []byte, err error) bool {
	obj := map[string]any{}
	if json.Unmarshal(old, &obj) != nil {
		return false
	}
	oldErr := policytemplate.DecodePolicy(obj, &policyv1.Policy{})
	return oldErr != nil && oldErr.Error() == err.Error()
}

// refuse is the answer for an invalid Policy: 422 Invalid, as the API
// server itself answers for objects that fail validation.
func refuse(p *policyv1.Policy, cause metav1.CauseType, field, problem string) admission.Response {
	resp := admission.Denied(fmt.Sprintf("Policy %s/%s is refused: %s", p.Namespace, p.Name, problem))
	resp.Result.Code = http.StatusUnprocessableEntity
	resp.Result.Reason = metav1.StatusReasonInvalid
	resp.Result.Details = &metav1.StatusDetails{
		Name:   p.Name,
		Group:  policyv1.GroupName,
		Kind:   policyv1.PolicyKind,
		Causes: []metav1.StatusCause{{Type: cause, Field: field, Message: problem}},
	}
	return resp
}

// SetupWebhook registers the Validator with the manager's webhook server,
// which the manager then starts.
func SetupWebhook(mgr manager.Manager) {
	mgr.GetWebhookServer().Register(WebhookPath, &webhook.Admission{Handler: Validator{}})
}
