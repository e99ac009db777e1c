package work

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// WebhookPath is where the hub's webhook server serves ManifestWork admission.
const WebhookPath = "/validate-work-open-cluster-management-io-v1-manifestwork"

// Validator is the admission handler that refuses ManifestWorks whose
// manifests Validate finds fault with.
type Validator struct{}

var _ admission.Handler = Validator{}

// Handle admits or refuses one CREATE or UPDATE of a ManifestWork.
func (Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	work := &workv1.ManifestWork{}
	if err := json.Unmarshal(req.Object.Raw, work); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode the ManifestWork: %w", err))
	}
	if req.Operation == admissionv1.Update {
		old := &workv1.ManifestWork{}
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode the old ManifestWork: %w", err))
		}
		// A work stored before this check (or before a stricter one) must
		// stay editable otherwise: the agent removes its finalizer, users
		// label it, and deleting it must not hang.
		if sameManifests(old.Spec.Workload.Manifests, work.Spec.Workload.Manifests) {
			return admission.Allowed("")
		}
	}
	problems := Validate(work.Spec.Workload.Manifests)
	if len(problems) == 0 {
		return admission.Allowed("")
	}
	return refuse(work, problems)
}

// refuse is the answer for an invalid work: 422 Invalid, as the API server
// itself answers for objects that fail validation, with one cause per
// problem.
func refuse(work *workv1.ManifestWork, problems []Problem) admission.Response {
	causes := make([]metav1.StatusCause, 0, len(problems))
	for _, p := range problems {
		cause := metav1.StatusCause{Type: metav1.CauseTypeFieldValueRequired, Message: p.Describe(SpecPath), Field: SpecPath(p.Index)}
		switch {
		case p.TooLarge():
			cause.Type, cause.Field = metav1.CauseTypeTooLong, "spec.workload.manifests"
		case p.Field != "":
			cause.Field += "." + p.Field
		default:
			cause.Type = metav1.CauseTypeTypeInvalid
		}
		causes = append(causes, cause)
	}
	resp := admission.Denied(fmt.Sprintf("ManifestWork %s/%s is refused: %s", work.Namespace, work.Name, Describe(problems, SpecPath)))
	resp.Result.Code = http.StatusUnprocessableEntity
	resp.Result.Reason = metav1.StatusReasonInvalid
	resp.Result.Details = &metav1.StatusDetails{
		Name:   work.Name,
		Group:  workv1.GroupName,
		Kind:   "ManifestWork",
		Causes: causes,
	}
	return resp
}

func sameManifests(a, b []workv1.Manifest) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].Raw, b[i].Raw) {
			return false
		}
	}
	return true
}

// SetupWebhook registers the Validator with the manager's webhook server,
// which the manager then starts.
func SetupWebhook(mgr manager.Manager) {
	mgr.GetWebhookServer().Register(WebhookPath, &webhook.Admission{Handler: Validator{}})
}
